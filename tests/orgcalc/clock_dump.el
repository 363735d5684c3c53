;;; clock_dump.el --- Org's own clock accounting, one JSON line per fact  -*- lexical-binding: t -*-
;; Usage: emacs -Q --batch -l clock_dump.el -- ROOT START END OUT FILE...
;; START, END: "YYYY-MM-DD" (the span is START 00:00 to END 00:00).  Per file:
;;  - element: every clock element org-element makes (`org-element-map' over 'clock), its
;;    line and the minutes of its closed interval inside the span (running: minutes null);
;;  - quoted: every "CLOCK:" line that is NOT a clock element (in a block, a table...);
;;  - sum: `org-clock-sum' over the span (what clocktables use), per headline (its line,
;;    the :org-clock-minutes Org puts on it) -- Org's own regexp count, quoted lines too.
(require 'org)
(require 'org-element)
(require 'org-clock)
(require 'json)
(let* ((args (cdr (member "--" command-line-args)))
       (root (file-name-as-directory (expand-file-name (nth 0 args))))
       (tstart (float-time (org-time-string-to-time (concat (nth 1 args) " 00:00"))))
       (tend (float-time (org-time-string-to-time (concat (nth 2 args) " 00:00"))))
       (out (nth 3 args))
       (files (nthcdr 4 args))
       lines)
  (dolist (f files)
    (with-current-buffer (find-file-noselect (expand-file-name f))
      (let ((rel (file-relative-name (buffer-file-name) root))
            (clock-lines nil))
        (org-element-map (org-element-parse-buffer) 'clock
          (lambda (c)
            (let* ((ts (org-element-property :value c))
                   (line (line-number-at-pos (org-element-property :begin c) t))
                   (minutes
                    (when (eq (org-element-property :status c) 'closed)
                      (let* ((a (float-time (org-timestamp-to-time ts)))
                             (b (float-time (org-timestamp-to-time ts t)))
                             (d (- (min b tend) (max a tstart))))
                        (if (> d 0) (floor d 60) 0)))))
              (push line clock-lines)
              (push (json-encode `((kind . "element") (file . ,rel) (line . ,line)
                                   (minutes . ,minutes)
                                   (start . ,(and ts (format-time-string
                                                      "%Y-%m-%dT%H:%M"
                                                      (org-timestamp-to-time ts))))))
                    lines))))
        (save-excursion
          (goto-char (point-min))
          (while (re-search-forward "^[ \t]*CLOCK:" nil t)
            (let ((line (line-number-at-pos nil t)))
              (unless (memq line clock-lines)
                (push (json-encode `((kind . "quoted") (file . ,rel) (line . ,line))) lines)))))
        (org-clock-sum tstart tend)
        (org-map-entries
         (lambda ()
           (push (json-encode `((kind . "sum") (file . ,rel)
                                (line . ,(line-number-at-pos nil t))
                                (minutes . ,(or (get-text-property (point) :org-clock-minutes)
                                                0))))
                 lines))
         nil nil))))
  (with-temp-file out
    (insert (mapconcat #'identity (nreverse lines) "\n") "\n")))
