;;; org_element_dump.el --- Emacs's own reading of Org files, as JSON lines  -*- lexical-binding: t -*-

;; The reference side of the parser tests: what `org-element-parse-buffer' makes of
;; each file, in the record shape of `opencortex.org.orgfid.records' (one "file" record,
;; then one "headline" record per headline in buffer order), so the two can be compared
;; field by field.  Written for this repository; run with the Emacs that
;; scripts/setup.sh installs (emacs-nox):
;;
;;   emacs -Q --batch -l org_element_dump.el -- --root DIR --out FILE [--list LIST] FILE...
;;
;; --root makes the "file" fields relative to DIR; --out is the JSON-lines output;
;; --list names a file holding more paths, one per line.  A file Emacs cannot read
;; yields {"type": "file", "error": "..."} instead of ending the run.

(require 'org)
(require 'org-element)
(require 'org-id)                       ; the "id:" link type, as in any Org set-up
(require 'json)
(require 'subr-x)

(defconst oc-dump-keywords
  '("TITLE" "FILETAGS" "TODO" "SEQ_TODO" "TYP_TODO" "STARTUP" "SETUPFILE" "LINK")
  "In-buffer keywords reported in the file record, wherever they appear.")

(defvar oc-dump-lines nil "Output lines, newest first.")

(defun oc-dump-plain (x)
  "X as a string without text properties (nil stays nil)."
  (cond ((null x) nil)
        ((stringp x) (substring-no-properties x))
        (t (format "%s" x))))

(defun oc-dump-put (record)
  "Queue RECORD (an alist) as one JSON line."
  (let ((json-encoding-pretty-print nil))
    (push (json-encode record) oc-dump-lines)))

(defun oc-dump-trim (text)
  "TEXT without its leading blank lines and its trailing whitespace."
  (let ((s (replace-regexp-in-string "\\`\\(?:[ \t]*\n\\)+" "" text)))
    (replace-regexp-in-string "[ \t\r\n]+\\'" "" s)))

(defun oc-dump-sha (text)
  "First 16 hex digits of the SHA-1 of TEXT's UTF-8 bytes."
  (substring (secure-hash 'sha1 (encode-coding-string text 'utf-8-unix t)) 0 16))

(defun oc-dump-links (tree)
  "Vector of [TYPE PATH FORMAT] for each link object in TREE (element or secondary string)."
  (let (found)
    (when tree
      (org-element-map tree 'link
        (lambda (link)
          (push (vector (oc-dump-plain (org-element-property :type link))
                        (oc-dump-plain (org-element-property :path link))
                        (oc-dump-plain (org-element-property :format link)))
                found))))
    (vconcat (nreverse found))))

(defun oc-dump-own-section (node)
  "The section directly under NODE (a headline or the document), if it has one."
  (let ((head (car (org-element-contents node))))
    (and (eq (org-element-type head) 'section) head)))

(defun oc-dump-timestamp (ts)
  "The text of timestamp object TS as written, or nil."
  (and ts (oc-dump-plain (org-element-property :raw-value ts))))

(defun oc-dump-section-facts (headline)
  "(BODY . PROPERTIES) of HEADLINE's own section.
BODY is the section's text after the planning line and the property drawer, trimmed
by `oc-dump-trim'; PROPERTIES is a list of [KEY VALUE] in drawer order."
  (let ((section (oc-dump-own-section headline))
        (props '()))
    (if (null section)
        (cons "" nil)
      (let ((from (org-element-property :begin section))
            (to (org-element-property :end section))
            (kids (org-element-contents section)))
        ;; only the first two children can be the planning line and the drawer
        (dolist (kid (list (nth 0 kids) (nth 1 kids)))
          (when kid
            (cond
             ((eq (org-element-type kid) 'planning)
              (when (= (org-element-property :begin kid) from)
                (setq from (org-element-property :end kid))))
             ((eq (org-element-type kid) 'property-drawer)
              (when (<= (org-element-property :begin kid) from)
                (setq from (org-element-property :end kid)))
              (dolist (np (org-element-contents kid))
                (when (eq (org-element-type np) 'node-property)
                  (push (vector (oc-dump-plain (org-element-property :key np))
                                (or (oc-dump-plain (org-element-property :value np)) ""))
                        props)))))))
        (cons (oc-dump-trim (buffer-substring-no-properties from to))
              (nreverse props))))))

(defun oc-dump-headline (headline rel index line)
  "The record of HEADLINE, the INDEXth of file REL, starting on LINE."
  (let* ((facts (oc-dump-section-facts headline))
         (body (car facts))
         (priority (org-element-property :priority headline)))
    `((type . "headline")
      (file . ,rel)
      (index . ,index)
      (line . ,line)
      (level . ,(org-element-property :level headline))
      (title . ,(oc-dump-plain (org-element-property :raw-value headline)))
      (todo . ,(oc-dump-plain (org-element-property :todo-keyword headline)))
      (priority . ,(and priority (char-to-string priority)))
      (tags . ,(vconcat (mapcar #'oc-dump-plain (org-element-property :tags headline))))
      (comment . ,(if (org-element-property :commentedp headline) t :json-false))
      (id . ,(oc-dump-plain (org-element-property :ID headline)))
      (properties . ,(vconcat (cdr facts)))
      (scheduled . ,(oc-dump-timestamp (org-element-property :scheduled headline)))
      (deadline . ,(oc-dump-timestamp (org-element-property :deadline headline)))
      (closed . ,(oc-dump-timestamp (org-element-property :closed headline)))
      (body_len . ,(length body))
      (body_hash . ,(oc-dump-sha body))
      (body . ,body)
      (links . ,(vconcat (oc-dump-links (org-element-property :title headline))
                         (oc-dump-links (oc-dump-own-section headline)))))))

(defun oc-dump-keywords (tree)
  "Alist KEY -> vector of values, in order, of the `oc-dump-keywords' in TREE."
  (let (acc)
    (org-element-map tree 'keyword
      (lambda (kw)
        (let ((key (upcase (org-element-property :key kw))))
          (when (member key oc-dump-keywords)
            (let ((cell (assoc key acc)))
              (unless cell
                (setq cell (list key))
                (push cell acc))
              (setcdr cell (cons (oc-dump-plain (org-element-property :value kw))
                                 (cdr cell))))))))
    (mapcar (lambda (cell) (cons (car cell) (vconcat (reverse (cdr cell)))))
            (reverse acc))))

(defun oc-dump-current-buffer (rel)
  "Queue the file record and the headline records of the current Org buffer."
  (let ((tree (org-element-parse-buffer))
        (heads '())
        (count 0))
    (org-element-map tree 'headline
      (lambda (hl)
        (let ((line (line-number-at-pos (org-element-property :begin hl) t)))
          (push (oc-dump-headline hl rel count line) heads)
          (setq count (1+ count)))))
    (oc-dump-put
     `((type . "file")
       (file . ,rel)
       (error . nil)
       (headline_count . ,count)
       (keywords . ,(or (oc-dump-keywords tree) (make-hash-table)))
       (todo_keywords . ,(vconcat (mapcar #'oc-dump-plain org-not-done-keywords)))
       (done_keywords . ,(vconcat (mapcar #'oc-dump-plain org-done-keywords)))
       (links . ,(oc-dump-links (oc-dump-own-section tree)))))
    (mapc #'oc-dump-put (nreverse heads))))

(defun oc-dump-file (path root)
  "Queue the records of the Org file PATH (named relative to ROOT)."
  (let* ((abs (expand-file-name path))
         (rel (if root (file-relative-name abs (file-name-as-directory root)) path)))
    (condition-case err
        (with-temp-buffer
          (let ((default-directory (file-name-directory abs))
                (enable-local-variables nil)
                (org-inhibit-startup t))
            (insert-file-contents abs)
            (delay-mode-hooks (org-mode))
            (oc-dump-current-buffer rel)))
      (error (oc-dump-put `((type . "file") (file . ,rel)
                            (error . ,(error-message-string err))))))))

(defun oc-dump-main ()
  "Read the command line after --, dump every named file, write the output."
  (let ((args command-line-args-left) root out files)
    (setq command-line-args-left nil)
    (while args
      (let ((arg (pop args)))
        (pcase arg
          ("--" nil)
          ("--root" (setq root (expand-file-name (pop args))))
          ("--out" (setq out (pop args)))
          ("--list"
           (with-temp-buffer
             (insert-file-contents (pop args))
             (dolist (line (split-string (buffer-string) "\n" t "[ \t\r]+"))
               (push line files))))
          (_ (push arg files)))))
    ;; what the first `org-mode' would do: register the link types of `org-modules'
    (org-load-modules-maybe t)
    (dolist (f (nreverse files)) (oc-dump-file f root))
    (let ((text (concat (mapconcat #'identity (reverse oc-dump-lines) "\n")
                        (if oc-dump-lines "\n" "")))
          (coding-system-for-write 'utf-8-unix))
      (if out
          (write-region text nil out nil 'silent)
        (princ text)))))

(oc-dump-main)
;;; org_element_dump.el ends here
