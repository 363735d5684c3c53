;;; match_dump.el --- the headlines Org's `org-map-entries' selects for match strings  -*- lexical-binding: t -*-
;; Usage: emacs -Q --batch -l match_dump.el -- ROOT TODAY MATCHES.json OUT FILE...
;; MATCHES.json: a JSON array of Org match strings.  "today" is TODAY (for "<today>").
;; Each output line: {"match": M, "file": relative name, "line": headline line}.
(require 'org)
(require 'json)
(let* ((args (cdr (member "--" command-line-args)))
       (root (file-name-as-directory (expand-file-name (nth 0 args))))
       (tod (org-parse-time-string (concat (nth 1 args) " 00:00")))
       (matches (append (json-read-file (nth 2 args)) nil))
       (out (nth 3 args))
       (files (nthcdr 4 args))
       lines)
  (advice-add 'org-today :override
              (lambda () (calendar-absolute-from-gregorian
                          (list (nth 4 tod) (nth 3 tod) (nth 5 tod)))))
  (advice-add 'org-matcher-time :around
              (lambda (f s)
                (if (member s '("<today>" "<tomorrow>" "<yesterday>"))
                    (float-time (encode-time 0 0 0 (+ (nth 3 tod)
                                                      (pcase s ("<tomorrow>" 1)
                                                        ("<yesterday>" -1) (_ 0)))
                                             (nth 4 tod) (nth 5 tod)))
                  (funcall f s))))
  (dolist (f files)
    (with-current-buffer (find-file-noselect (expand-file-name f))
      (let ((rel (file-relative-name (buffer-file-name) root)))
        (dolist (m matches)
          (org-map-entries
           (lambda ()
             (push (json-encode `((match . ,m) (file . ,rel)
                                  (line . ,(line-number-at-pos nil t))))
                   lines))
           m nil)))))
  (with-temp-file out
    (insert (mapconcat #'identity (nreverse lines) "\n") "\n")))
