;;; md_dump.el --- what org-element makes of rendered answers, as JSON lines  -*- lexical-binding: t -*-
;; emacs -Q --batch -l md_dump.el -- OUT FILE...   (one JSON object per file)
(require 'org)
(require 'org-element)
(require 'org-id)
(require 'json)

(defun mdd--str (x) (and x (substring-no-properties (format "%s" x))))

(defun mdd--file (file)
  (with-temp-buffer
    (let ((enable-local-variables nil) (org-inhibit-startup t))
      (insert-file-contents file)
      (delay-mode-hooks (org-mode))
      (let* ((data (org-element-parse-buffer))
             (count (lambda (type) (length (org-element-map data type #'identity)))))
        `((file . ,file)
          (headlines . ,(vconcat (org-element-map data 'headline
                                   (lambda (h) (vector (org-element-property :level h)
                                                       (mdd--str (org-element-property :raw-value h))
                                                       (mdd--str (org-element-property :todo-keyword h))
                                                       (vconcat (mapcar #'mdd--str (org-element-property :tags h))))))))
          (src . ,(vconcat (org-element-map data 'src-block
                             (lambda (b) (vector (mdd--str (org-element-property :language b))
                                                 (mdd--str (org-element-property :value b)))))))
          (example . ,(vconcat (org-element-map data 'example-block
                                 (lambda (b) (mdd--str (org-element-property :value b))))))
          (links . ,(vconcat (org-element-map data 'link
                               (lambda (l) (vector (mdd--str (org-element-property :type l))
                                                   (mdd--str (org-element-property :raw-link l)))))))
          (bold . ,(vconcat (org-element-map data 'bold
                              (lambda (b) (mdd--str (org-element-interpret-data (org-element-contents b)))))))
          (italic . ,(funcall count 'italic))
          (code . ,(vconcat (org-element-map data '(code verbatim)
                              (lambda (c) (mdd--str (org-element-property :value c))))))
          (strike . ,(funcall count 'strike-through))
          (tables . ,(funcall count 'table))
          (table_rows . ,(length (org-element-map data 'table-row
                                   (lambda (r) (and (eq (org-element-property :type r) 'standard) r)))))
          (quotes . ,(funcall count 'quote-block))
          (items . ,(funcall count 'item))
          (checkboxes . ,(vconcat (delq nil (org-element-map data 'item
                                              (lambda (i) (mdd--str (org-element-property :checkbox i)))))))
          (rules . ,(funcall count 'horizontal-rule))
          (breaks . ,(funcall count 'line-break))
          (structure . ,(vconcat (org-element-map data
                                     '(keyword planning clock drawer property-drawer diary-sexp
                                       babel-call dynamic-block footnote-definition inlinetask
                                       node-property fixed-width export-block comment-block)
                                   (lambda (e) (mdd--str (org-element-type e)))))))))))

(let* ((args (cdr (member "--" command-line-args-left)))
       (out (car args)) (files (cdr args)))
  (setq command-line-args-left nil)
  (with-temp-buffer
    (dolist (f files)
      (insert (json-encode (condition-case err (mdd--file f)
                             (error `((file . ,f) (error . ,(error-message-string err))))))
              "\n"))
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region (point-min) (point-max) out nil 'silent))))
