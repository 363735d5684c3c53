;;; agenda_dump.el --- print what Org's own `org-agenda-list' shows, one JSON line per item  -*- lexical-binding: t -*-
;; Usage: emacs -Q --batch -l agenda_dump.el -- ROOT START DAYS OUT FILE...
;; Org's default settings; no diary, no time grid.  ROOT makes file names relative.
;; Each item: date (from the day header it sits under), file, line of its headline,
;; Org's `type' text property, its `time-of-day' as HH:MM (or null), and whether a
;; diary sexp made it (OpenCortex never evaluates those).
(require 'org)
(require 'org-agenda)
(require 'json)
(let* ((args (cdr (member "--" command-line-args)))
       (root (file-name-as-directory (expand-file-name (nth 0 args))))
       (start (nth 1 args))
       (days (string-to-number (nth 2 args)))
       (out (nth 3 args))
       (files (mapcar #'expand-file-name (nthcdr 4 args)))
       (org-agenda-files files)
       (org-agenda-include-diary nil)
       (org-agenda-use-time-grid nil)
       (org-agenda-span days)
       (org-agenda-start-on-weekday nil)
       (org-agenda-sticky nil)
       (tod (org-parse-time-string (concat start " 00:00"))))
  ;; "today" is START: Org's agenda reads the day from `org-today'
  (advice-add 'org-today :override
              (lambda () (calendar-absolute-from-gregorian
                          (list (nth 4 tod) (nth 3 tod) (nth 5 tod)))))
  (org-agenda-list nil start days)
  (with-current-buffer org-agenda-buffer-name
    (let (day lines)
      (goto-char (point-min))
      (while (not (eobp))
        (let ((date-line (get-text-property (point) 'org-date-line))
              (marker (get-text-property (point) 'org-hd-marker)))
          (cond
           (date-line
            (setq day (get-text-property (point) 'day)))
           (marker
            (let* ((g (calendar-gregorian-from-absolute day))
                   (m (get-text-property (point) 'org-marker))
                   (sexp (or (equal (get-text-property (point) 'type) "sexp")
                             (and m (with-current-buffer (marker-buffer m)
                                      (save-excursion
                                        (goto-char m)
                                        (looking-at-p "<?%%("))))))
                   (tod (get-text-property (point) 'time-of-day))
                   (buf (marker-buffer marker))
                   (line (with-current-buffer buf
                           (save-excursion (goto-char marker)
                                           (line-number-at-pos nil t)))))
              (push (json-encode
                     `((date . ,(format "%04d-%02d-%02d" (nth 2 g) (nth 0 g) (nth 1 g)))
                       (file . ,(file-relative-name (buffer-file-name buf) root))
                       (line . ,line)
                       (type . ,(get-text-property (point) 'type))
                       (time . ,(and tod (format "%02d:%02d" (/ tod 100) (% tod 100))))
                       (sexp . ,(if sexp t :json-false))))
                    lines)))))
        (forward-line 1))
      (with-temp-file out
        (insert (mapconcat #'identity (nreverse lines) "\n") "\n")))))
