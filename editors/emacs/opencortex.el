;;; opencortex.el --- Emacs client for the OpenCortex daemon  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The OpenCortex authors

;; Author: The OpenCortex authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: outlines, convenience, tools
;; URL: https://github.com/opencortex/opencortex

;; This file is not part of GNU Emacs.

;;; Commentary:

;; OpenCortex is a local-first personal agent that lives in your Org files
;; (your "memex").  This package talks to the local daemon started with
;; `opencortex serve' over its HTTP JSON API:
;;
;; - `opencortex-mode' (a minor mode for Org buffers in the memex) sends a
;;   buffer-update event after every save and a point-update event when point
;;   settles on another headline (debounced).  Headlines such as
;;   "* @agent summarise my notes on BM25" are answered by the daemon under the
;;   headline in the file on disk; the buffer is then reverted (when it has no
;;   unsaved changes) so the answer shows up.
;; - `opencortex-global-mode' turns `opencortex-mode' on in every Org buffer
;;   under `opencortex-memex-directory'.
;; - `opencortex-chat' opens an Org chat buffer; `opencortex-search',
;;   `opencortex-capture' and `opencortex-recollect' do what they say;
;;   `opencortex-approve' / `opencortex-deny' answer pending approvals.
;;   `opencortex-trust-skill' shows a literate skill's code and trusts it (approval).
;;
;; The token is looked up with `auth-source' (host "127.0.0.1" or the host of
;; `opencortex-url', user "opencortex"), then $OPENCORTEX_TOKEN, then the file
;; written by `opencortex token' (~/.config/opencortex/token).
;;
;; Nothing is sent over the network when this file is loaded, and the hooks
;; never block: they use `url-retrieve' asynchronously.
;;
;; Quick start:
;;
;;   (add-to-list 'load-path "/path/to/opencortex/editors/emacs")
;;   (require 'opencortex)
;;   (setq opencortex-memex-directory "~/memex")
;;   (opencortex-global-mode 1)

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'seq)
(require 'subr-x)
(require 'url)
(require 'url-http)
(require 'auth-source)
(require 'org)

(defvar url-http-end-of-headers)
(defvar url-http-response-status)
(defvar opencortex-mode)

;;;; Customization

(defgroup opencortex nil
  "Client for the OpenCortex daemon (a personal agent in your Org files)."
  :group 'org
  :prefix "opencortex-")

(defcustom opencortex-url "http://127.0.0.1:8765"
  "Base URL of the OpenCortex daemon (`opencortex serve')."
  :type 'string)

(defcustom opencortex-memex-directory "~/memex"
  "The memex: the folder of Org files the daemon serves."
  :type 'directory)

(defcustom opencortex-point-update-delay 1.0
  "Idle seconds before a point-update after point moved to another headline."
  :type 'number)

(defcustom opencortex-send-buffer-updates t
  "Non-nil means `opencortex-mode' sends a buffer-update after each save."
  :type 'boolean)

(defcustom opencortex-send-point-updates t
  "Non-nil means `opencortex-mode' sends the headline point is on."
  :type 'boolean)

(defcustom opencortex-token nil
  "The daemon's API token, or nil to look it up.
When nil the token comes from `auth-source', then $OPENCORTEX_TOKEN, then
`opencortex-token-file'."
  :type '(choice (const :tag "Look it up" nil) string))

(defcustom opencortex-token-file
  (expand-file-name "opencortex/token"
                    (or (getenv "XDG_CONFIG_HOME") "~/.config"))
  "File holding the daemon's token (written by `opencortex token')."
  :type 'file)

(defcustom opencortex-approver-token-file
  (expand-file-name "opencortex/approver-token"
                    (or (getenv "XDG_CONFIG_HOME") "~/.config"))
  "File holding the person's approver token (written 0600 by the daemon).
Only the person's own tools send it: with it Emacs may list every pending
approval with its arguments and approve or deny one; the API token alone cannot."
  :type 'file)

(defcustom opencortex-answer-timeout 300
  "Seconds to watch a saved file for answers to @agent headlines."
  :type 'number)

(defcustom opencortex-answer-poll-interval 0.5
  "Seconds between checks of the file while an @agent answer is awaited."
  :type 'number)

(defcustom opencortex-request-timeout 120
  "Seconds interactive commands wait for the daemon."
  :type 'number)

(defcustom opencortex-search-results 10
  "How many hits `opencortex-search' asks for."
  :type 'integer)

(defcustom opencortex-chat-buffer-name "*opencortex*"
  "Name of the chat buffer."
  :type 'string)

;;;; Token

(defun opencortex--url-host ()
  "The host part of `opencortex-url'."
  (or (ignore-errors (url-host (url-generic-parse-url opencortex-url)))
      "127.0.0.1"))

(defun opencortex--auth-source-token ()
  "The token stored in `auth-source' for the daemon, or nil."
  (let* ((hosts (delete-dups (list (opencortex--url-host) "127.0.0.1" "localhost")))
         (found (ignore-errors
                  (car (auth-source-search :host hosts :user "opencortex"
                                           :max 1 :require '(:secret)))))
         (secret (plist-get found :secret)))
    (when (functionp secret)
      (setq secret (funcall secret)))
    (and (stringp secret) (not (string-empty-p secret)) secret)))

(defun opencortex--file-token ()
  "The token in `opencortex-token-file', or nil."
  (let ((file (and opencortex-token-file
                   (expand-file-name opencortex-token-file))))
    (when (and file (file-readable-p file))
      (let ((tok (string-trim (with-temp-buffer
                                (insert-file-contents file)
                                (buffer-string)))))
        (and (not (string-empty-p tok)) tok)))))

(defun opencortex-get-token ()
  "The daemon's API token, or nil when none is configured.
Looks at `opencortex-token', `auth-source' (host \"127.0.0.1\" or the host of
`opencortex-url', user \"opencortex\"), $OPENCORTEX_TOKEN, then
`opencortex-token-file'."
  (or (and (stringp opencortex-token) (not (string-empty-p opencortex-token))
           opencortex-token)
      (opencortex--auth-source-token)
      (let ((env (getenv "OPENCORTEX_TOKEN")))
        (and env (not (string-empty-p (string-trim env))) (string-trim env)))
      (opencortex--file-token)))

(defun opencortex-get-approver-token ()
  "The person's approver token: $OPENCORTEX_APPROVER_TOKEN, then
`opencortex-approver-token-file'; nil when neither is there."
  (let ((env (getenv "OPENCORTEX_APPROVER_TOKEN")))
    (if (and env (not (string-empty-p (string-trim env))))
        (string-trim env)
      (let ((file (and opencortex-approver-token-file
                       (expand-file-name opencortex-approver-token-file))))
        (when (and file (file-readable-p file))
          (let ((tok (string-trim (with-temp-buffer
                                    (insert-file-contents file)
                                    (buffer-string)))))
            (and (not (string-empty-p tok)) tok)))))))

;;;; HTTP

(defun opencortex--endpoint (path)
  "The URL for PATH on the daemon."
  (concat (string-remove-suffix "/" opencortex-url) path))

(defun opencortex--headers (auth)
  "Request headers; with AUTH non-nil, the bearer token and (Emacs being the
person's own tool) the approver token too."
  (let ((tok (and auth (opencortex-get-token)))
        (approver (and auth (opencortex-get-approver-token))))
    (append '(("Content-Type" . "application/json")
              ("Accept" . "application/json"))
            (when tok
              (list (cons "Authorization"
                          (encode-coding-string (concat "Bearer " tok) 'utf-8))))
            (when approver
              (list (cons "X-OpenCortex-Approver"
                          (encode-coding-string approver 'utf-8)))))))

(defun opencortex--json-read (string)
  "Parse the JSON STRING into alists and lists, or nil when it is not JSON."
  (when (and string (not (string-empty-p (string-trim string))))
    (condition-case nil
        (let ((json-object-type 'alist)
              (json-array-type 'list)
              (json-key-type 'symbol)
              (json-false nil)
              (json-null nil))
          (json-read-from-string string))
      (error nil))))

(defun opencortex--json-encode (object)
  "OBJECT as a UTF-8 encoded JSON string (unibyte, ready to send)."
  (encode-coding-string (json-encode object) 'utf-8))

(defun opencortex--parse-response (buffer)
  "Status and parsed body of the HTTP response in BUFFER, as (STATUS . BODY)."
  (with-current-buffer buffer
    (let* ((status (or (bound-and-true-p url-http-response-status)
                       (save-excursion
                         (goto-char (point-min))
                         (and (looking-at "HTTP/[0-9.]+ \\([0-9]+\\)")
                              (string-to-number (match-string 1))))))
           (start (or (bound-and-true-p url-http-end-of-headers)
                      (save-excursion
                        (goto-char (point-min))
                        (and (re-search-forward "\r?\n\r?\n" nil t) (point)))))
           (raw (and start (buffer-substring-no-properties start (point-max))))
           (text (and raw (decode-coding-string (string-to-unibyte
                                                 (if (multibyte-string-p raw)
                                                     (encode-coding-string raw 'raw-text)
                                                   raw))
                                                'utf-8))))
      (cons status (opencortex--json-read text)))))

(defun opencortex--request (method path &optional body callback auth)
  "Send METHOD PATH to the daemon asynchronously, with JSON BODY.
CALLBACK, when non-nil, is called with (STATUS DATA), STATUS being the HTTP
status code (nil on a connection error) and DATA the parsed JSON reply.
AUTH non-nil (the default for every path but /healthz) sends the token.
Returns the process buffer, or nil when the request could not be started."
  (let ((url-request-method method)
        (url-request-extra-headers (opencortex--headers (or auth (not (equal path "/healthz")))))
        (url-request-data (and body (opencortex--json-encode body)))
        (url-show-status nil))
    (condition-case err
        (url-retrieve
         (opencortex--endpoint path)
         (lambda (status)
           (let ((buf (current-buffer))
                 (result (if (plist-get status :error)
                             (condition-case nil
                                 (opencortex--parse-response (current-buffer))
                               (error (cons nil nil)))
                           (opencortex--parse-response (current-buffer)))))
             (when (and (plist-get status :error) (not (numberp (car result))))
               (setq result (cons nil nil)))
             (unwind-protect
                 (when callback
                   (funcall callback (car result) (cdr result)))
               (when (buffer-live-p buf) (kill-buffer buf)))))
         nil t t)
      (error
       (when callback (funcall callback nil (list (cons 'error (error-message-string err)))))
       nil))))

(defun opencortex--request-sync (method path &optional body timeout)
  "Send METHOD PATH with JSON BODY and wait (at most TIMEOUT seconds).
Returns (STATUS . DATA); STATUS is nil when the daemon could not be reached.
For interactive commands only; hooks use `opencortex--request'."
  (let* ((done nil) (result nil)
         (deadline (+ (float-time) (or timeout opencortex-request-timeout))))
    (opencortex--request method path body
                         (lambda (status data)
                           (setq result (cons status data) done t)))
    (while (and (not done) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or result (cons nil nil))))

(defun opencortex--check (result what)
  "Signal a `user-error' unless RESULT, a (STATUS . DATA), is a success.
WHAT names the request in the message."
  (let ((status (car result)) (data (cdr result)))
    (cond
     ((null status)
      (user-error "OpenCortex: %s: daemon not reachable at %s (run `opencortex serve')"
                  what opencortex-url))
     ((memq status '(401 403))
      (user-error "OpenCortex: %s: unauthorized (check the token: `opencortex token')" what))
     ((>= status 400)
      (user-error "OpenCortex: %s failed (%s): %s" what status
                  (or (and (listp data) (or (alist-get 'error data) (alist-get 'detail data)))
                      "")))
     (t data))))

;;;###autoload
(defun opencortex-health (&optional interactive)
  "Non-nil when the daemon answers /healthz with ok.
With INTERACTIVE (as a command), say so in the echo area."
  (interactive (list t))
  (let* ((res (opencortex--request-sync "GET" "/healthz" nil 10))
         (ok (and (eql (car res) 200) (listp (cdr res)) (alist-get 'ok (cdr res)) t)))
    (when interactive
      (message "OpenCortex at %s: %s" opencortex-url
               (if ok "ok" "not reachable (run `opencortex serve')")))
    ok))

;;;; Files and events

(defun opencortex--memex-root ()
  "The memex directory, absolute and with a trailing slash."
  (file-name-as-directory (expand-file-name opencortex-memex-directory)))

(defun opencortex--in-memex-p (file)
  "Non-nil when FILE lies inside the memex."
  (and file
       (file-in-directory-p (file-truename file)
                            (file-truename (opencortex--memex-root)))))

(defun opencortex--event-file (file)
  "FILE as the daemon wants it: relative to the memex when inside it."
  (if (opencortex--in-memex-p file)
      (file-relative-name (file-truename file) (file-truename (opencortex--memex-root)))
    (expand-file-name file)))

(defun opencortex--buffer-text ()
  "The whole (widened) text of the current buffer, without properties."
  (save-restriction
    (widen)
    (buffer-substring-no-properties (point-min) (point-max))))

(defun opencortex-send-event (event &optional callback)
  "Send EVENT (an alist) to /v1/events asynchronously.
CALLBACK is as in `opencortex--request'."
  (opencortex--request "POST" "/v1/events" event callback))

(defvar-local opencortex--last-headline nil
  "Position of the headline the last point-update was about.")

(defvar-local opencortex--point-timer nil
  "Pending idle timer for a point-update.")

(defvar-local opencortex--answer-timer nil
  "Timer watching the file on disk for answers to @agent headlines.")

(defun opencortex-send-buffer-update (&optional callback)
  "Send the current buffer's text as a buffer-update event (asynchronously).
CALLBACK, when non-nil, gets (STATUS DATA)."
  (interactive)
  (when buffer-file-name
    (let ((buf (current-buffer)))
      (opencortex-send-event
       `((sensor . "buffer-update")
         (file . ,(opencortex--event-file buffer-file-name))
         (text . ,(opencortex--buffer-text)))
       (lambda (status data)
         (when (and status (< status 300) (buffer-live-p buf))
           (with-current-buffer buf
             (when (opencortex--pending-agent-headlines-p)
               (opencortex--watch-for-answers))))
         (when callback (funcall callback status data)))))))

(defun opencortex--after-save ()
  "Hook for `after-save-hook' in `opencortex-mode'."
  (when opencortex-send-buffer-updates
    (opencortex-send-buffer-update)))

(defun opencortex--headline-pos ()
  "Position of the headline point is under (0 before the first headline)."
  (save-excursion
    (if (ignore-errors (org-back-to-heading t) t) (point) 0)))

(defun opencortex--send-point-update (buf)
  "Send a point-update for BUF if point is on another headline than last time."
  (when (buffer-live-p buf)
    (with-current-buffer buf
      (setq opencortex--point-timer nil)
      (when (and opencortex-mode buffer-file-name opencortex-send-point-updates)
        (let ((pos (opencortex--headline-pos)))
          (unless (eql pos opencortex--last-headline)
            (setq opencortex--last-headline pos)
            (opencortex-send-event
             `((sensor . "point-update")
               (file . ,(opencortex--event-file buffer-file-name))
               (line . ,(line-number-at-pos (max pos (point-min)) t))))))))))

(defun opencortex--post-command ()
  "Schedule a debounced point-update when point moved to another headline."
  (when (and opencortex-send-point-updates (not opencortex--point-timer)
             (not (eql (opencortex--headline-pos) opencortex--last-headline)))
    (setq opencortex--point-timer
          (run-with-idle-timer opencortex-point-update-delay nil
                               #'opencortex--send-point-update (current-buffer)))))

(defun opencortex--pending-agent-headlines-p ()
  "Non-nil when the buffer has an @agent headline without :AGENT_HANDLED:."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (let (found)
        (while (and (not found)
                    (re-search-forward "^\\*+ .*@[[:alnum:]_-]+" nil t))
          (unless (org-entry-get (point) "AGENT_HANDLED")
            (setq found t)))
        found))))

(defun opencortex--stop-watching (buf)
  "Stop watching BUF's file for answers."
  (when (buffer-live-p buf)
    (with-current-buffer buf
      (when (timerp opencortex--answer-timer)
        (cancel-timer opencortex--answer-timer))
      (setq opencortex--answer-timer nil))))

(defun opencortex-revert-if-changed (&optional buffer)
  "Revert BUFFER (default: current) when its file changed on disk.
Only an unmodified buffer is reverted.
Returns non-nil when it reverted."
  (let ((buf (or buffer (current-buffer))))
    (when (buffer-live-p buf)
      (with-current-buffer buf
        (when (and buffer-file-name
                   (file-exists-p buffer-file-name)
                   (not (buffer-modified-p))
                   (not (verify-visited-file-modtime buf)))
          (let ((pos (point)))
            (revert-buffer t t t)
            (goto-char (min pos (point-max))))
          t)))))

(defun opencortex--watch-for-answers ()
  "Poll the file on disk; revert the buffer when the daemon wrote answers to it."
  (let ((buf (current-buffer))
        (deadline (+ (float-time) opencortex-answer-timeout))
        (answered nil))
    (opencortex--stop-watching buf)
    (setq opencortex--answer-timer
          (run-at-time
           opencortex-answer-poll-interval opencortex-answer-poll-interval
           (lambda ()
             (cond
              ((not (buffer-live-p buf)) nil)
              ((> (float-time) deadline) (opencortex--stop-watching buf))
              ((with-current-buffer buf (buffer-modified-p))
               ;; The person is editing: the next save sends a new update.
               (opencortex--stop-watching buf))
              ((opencortex-revert-if-changed buf)
               ;; The answer may come as several writes: keep watching a little.
               (with-current-buffer buf
                 (unless (opencortex--pending-agent-headlines-p)
                   (setq answered (float-time)))))
              ((and answered (> (- (float-time) answered) 5))
               (opencortex--stop-watching buf))))))))

;;;; Minor modes

(defvar opencortex-mode-map (make-sparse-keymap)
  "Keymap for `opencortex-mode'.")

;;;###autoload
(define-minor-mode opencortex-mode
  "Keep the OpenCortex daemon informed about this Org buffer.
Sends a buffer-update after each save and a point-update when point settles on
another headline; reverts the buffer when the daemon answered @agent headlines
in the file (and the buffer has no unsaved changes)."
  :lighter " Cortex"
  :keymap opencortex-mode-map
  (if opencortex-mode
      (progn
        (add-hook 'after-save-hook #'opencortex--after-save nil t)
        (add-hook 'post-command-hook #'opencortex--post-command nil t))
    (remove-hook 'after-save-hook #'opencortex--after-save t)
    (remove-hook 'post-command-hook #'opencortex--post-command t)
    (when (timerp opencortex--point-timer) (cancel-timer opencortex--point-timer))
    (setq opencortex--point-timer nil opencortex--last-headline nil)
    (opencortex--stop-watching (current-buffer))))

(defun opencortex--maybe-enable ()
  "Turn on `opencortex-mode' in Org buffers visiting a file in the memex."
  (when (and (derived-mode-p 'org-mode)
             buffer-file-name
             (opencortex--in-memex-p buffer-file-name))
    (opencortex-mode 1)))

;;;###autoload
(define-globalized-minor-mode opencortex-global-mode opencortex-mode
  opencortex--maybe-enable
  :group 'opencortex)

;;;; Rendering replies

(defun opencortex--file-link (file line)
  "An Org link to LINE of FILE (relative to the memex unless absolute)."
  (let ((abs (if (file-name-absolute-p file) file
               (expand-file-name file (opencortex--memex-root)))))
    (format "[[file:%s::%s][%s:%s]]" abs line file line)))

(defconst opencortex--citation-regexp
  (concat
   ;; 1: an existing Org link, left alone.
   "\\(\\[\\[[^]\n]+\\]\\(?:\\[[^]\n]*\\]\\)?\\]\\)"
   "\\|"
   ;; 2, 3: FILE.org:LINE
   "\\(?:\\_<\\|\\b\\)\\([[:alnum:]_./~-]*[[:alnum:]_-]\\.org\\):\\([0-9]+\\)"
   "\\|"
   ;; 4: id:ID
   "\\_<id:\\([[:alnum:]][[:alnum:]_.-]*[[:alnum:]]\\)")
  "Org links (kept), FILE.org:LINE citations and id:ID citations.")

(defun opencortex-linkify (text)
  "TEXT with citations made Org links.
\"notes/x.org:12\" becomes a file link to line 12 of that memex file and
\"id:UUID\" an id link; existing Org links are kept as they are."
  (let ((case-fold-search nil))
    (replace-regexp-in-string
     opencortex--citation-regexp
     (lambda (m)
       (cond ((match-beginning 1) m)
             ((match-beginning 2)
              (opencortex--file-link (match-string 2 m) (match-string 3 m)))
             ((match-beginning 4) (format "[[id:%s]]" (match-string 4 m)))
             (t m)))
     text t t)))

(defun opencortex--quote-org (text)
  "TEXT made safe inside an Org entry: headline-like lines are indented."
  (mapconcat (lambda (ln)
               (if (string-match-p "\\`\\(\\*+ \\|\\*+\\'\\|#\\+\\)" ln) (concat "  " ln) ln))
             (split-string text "\n") "\n"))

(defconst opencortex--code-approval-marker "is code that will run with your rights"
  "What the daemon's approval of code (a skill to trust or create) always says.")

(defun opencortex--literal-org (text)
  "TEXT shown literally in an Org buffer: an example block.
No Org syntax in it is live: a link would otherwise hide its target,
which may be code."
  (require 'org-src)
  (concat "#+begin_example\n" (org-escape-code-in-string (string-trim-right text))
          "\n#+end_example"))

(defun opencortex-render-reply (text)
  "TEXT (a reply from the daemon) as Org body text with links.
A reply that asks to approve code is shown literally (what you read runs)."
  (let ((text (string-trim-right (or text ""))))
    (if (string-match-p (regexp-quote opencortex--code-approval-marker) text)
        (opencortex--literal-org text)
      (opencortex-linkify (opencortex--quote-org text)))))

;;;; Chat

(defvar-local opencortex--chat-session nil "The daemon's session id for this chat.")
(defvar-local opencortex--chat-input-marker nil "Where the person's input starts.")
(defvar-local opencortex--chat-pending nil "Non-nil while a message awaits its reply.")
(defvar-local opencortex--chat-approval-timer nil
  "Timer polling pending approvals while a reply is awaited.")

(defcustom opencortex-approval-poll-interval 1.0
  "Seconds between checks for pending approvals while a chat reply is awaited."
  :type 'number)

(defconst opencortex--chat-prompt "* You: "
  "The headline the person types after.")

(defvar opencortex-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'opencortex-chat-send)
    (define-key map (kbd "RET") #'opencortex-chat-return)
    (define-key map (kbd "C-c C-a") #'opencortex-approve)
    (define-key map (kbd "C-c C-d") #'opencortex-deny)
    (define-key map (kbd "C-c C-k") #'opencortex-chat-reset)
    map)
  "Keymap for `opencortex-chat-mode'.")

(define-minor-mode opencortex-chat-mode
  "Minor mode of the OpenCortex chat buffer (an Org buffer).
Type after the last \"* You:\" prompt; \\<opencortex-chat-mode-map>\
\\[opencortex-chat-send] or RET there sends.
\\[opencortex-approve] / \\[opencortex-deny] answer the approval at point."
  :lighter " Cortex-Chat"
  :keymap opencortex-chat-mode-map)

(defun opencortex--chat-buffer ()
  "The chat buffer, created (and set up) when needed."
  (let ((buf (get-buffer-create opencortex-chat-buffer-name)))
    (with-current-buffer buf
      (unless opencortex-chat-mode
        (let ((inhibit-message t)) (org-mode))
        (opencortex-chat-mode 1)
        (setq-local org-return-follows-link nil)
        (setq-local default-directory (opencortex--memex-root))
        (when (= (buffer-size) 0)
          (insert "#+TITLE: OpenCortex\n")
          (insert "# Type after the prompt; C-c C-c or RET sends.  "
                  "C-c C-a / C-c C-d approve or deny.\n"))
        (opencortex--chat-new-prompt)))
    buf))

(defun opencortex--chat-new-prompt ()
  "Insert a new prompt headline at the end of the chat buffer."
  (goto-char (point-max))
  (unless (bolp) (insert "\n"))
  (insert opencortex--chat-prompt)
  (setq opencortex--chat-input-marker (copy-marker (point))))

(defun opencortex--chat-input ()
  "The text typed after the last prompt."
  (string-trim (buffer-substring-no-properties
                (or opencortex--chat-input-marker (point-max)) (point-max))))

(defun opencortex-chat-return ()
  "Send the input when point is in it; elsewhere do what RET does in Org."
  (interactive)
  (if (and opencortex--chat-input-marker
           (>= (point) opencortex--chat-input-marker))
      (opencortex-chat-send)
    (org-return)))

(defun opencortex--insert-reply (buf start end replies approvals)
  "Replace START..END (the placeholder) in BUF with REPLIES and APPROVALS."
  (with-current-buffer buf
    ;; Point after the placeholder (on an approval shown meanwhile) stays there.
    (let ((pt (copy-marker (point) (>= (point) end)))
          (inhibit-read-only t))
      (delete-region start end)
      (goto-char start)
      (insert (mapconcat #'opencortex-render-reply
                         (or (delq nil replies) '("(no reply)")) "\n\n")
              "\n")
      (dolist (a approvals)
        (insert (opencortex--format-approval a)))
      (goto-char pt)
      (set-marker pt nil))
    (set-marker start nil)
    (set-marker end nil)
    (opencortex--chat-stop-polling)
    (setq opencortex--chat-pending nil)
    (let ((at-end (= (point) (point-max))))
      (save-excursion (opencortex--chat-new-prompt))
      (when at-end (goto-char (point-max))))))

(defun opencortex--format-approval (a)
  "The Org entry for the pending approval A (an alist)."
  (let ((id (format "%s" (alist-get 'id a))))
    ;; args and reason are shown literally: they may carry code, and Org would hide a
    ;; link's target (or fold a headline) in them
    (format (concat "*** APPROVAL %s\n:PROPERTIES:\n:APPROVAL_ID: %s\n:END:\n"
                    "Tool: %s\nArgs:\n%s\nReason:\n%s\n"
                    "C-c C-a (opencortex-approve) approves, "
                    "C-c C-d (opencortex-deny) denies.\n")
            (or (alist-get 'tool a) "?") id (or (alist-get 'tool a) "?")
            (opencortex--literal-org
             (let ((args (alist-get 'args a)))
               (if (stringp args) args (json-encode args))))
            (opencortex--literal-org (format "%s" (or (alist-get 'reason a) ""))))))

(defun opencortex--reply-texts (data)
  "The reply texts in the chat response DATA."
  (let ((replies (alist-get 'replies data)))
    (cond ((and replies (listp replies))
           (mapcar (lambda (r) (if (stringp r) r
                                 (or (and (listp r) (alist-get 'text r)) (format "%s" r))))
                   replies))
          ((alist-get 'reply data) (list (alist-get 'reply data))))))

(defun opencortex--chat-approvals (data)
  "Pending approvals in the chat response DATA (from its data, when any)."
  (let ((d (and (listp data) (alist-get 'data data))))
    (and (listp d) (or (alist-get 'approvals d) (alist-get 'pending d)))))

(defun opencortex-chat-send-message (message &optional buffer)
  "Send MESSAGE to the agent from the chat BUFFER; the reply is inserted there.
The message is written in the prompt headline when it is not there already."
  (with-current-buffer (or buffer (opencortex--chat-buffer))
    (when opencortex--chat-pending
      (user-error "OpenCortex: still waiting for the previous reply"))
    (goto-char (point-max))
    (unless (equal (opencortex--chat-input) (string-trim message))
      (delete-region opencortex--chat-input-marker (point-max))
      (insert message))
    (goto-char (point-max))
    (insert "\n** OpenCortex\n")
    (let* ((buf (current-buffer))
           (start (copy-marker (point)))
           (end (progn (insert "…thinking\n") (copy-marker (point))))
           (body `((message . ,message) (stream . :json-false))))
      (when opencortex--chat-session
        (push (cons 'session opencortex--chat-session) body))
      (setq opencortex--chat-pending t)
      (opencortex--chat-stop-polling)
      ;; A request may wait for an approval: show those while the reply is awaited.
      (setq opencortex--chat-approval-timer
            (run-at-time opencortex-approval-poll-interval
                         opencortex-approval-poll-interval
                         #'opencortex--chat-fetch-approvals buf))
      (opencortex--request
       "POST" "/v1/chat" body
       (lambda (status data)
         (when (buffer-live-p buf)
           (with-current-buffer buf
             (if (and status (< status 300))
                 (progn
                   (when (alist-get 'session data)
                     (setq opencortex--chat-session (alist-get 'session data)))
                   (opencortex--insert-reply buf start end (opencortex--reply-texts data)
                                             (opencortex--chat-approvals data))
                   (opencortex--chat-fetch-approvals buf))
               (opencortex--insert-reply
                buf start end
                (list (format "(error: %s)"
                              (cond ((null status) (format "daemon not reachable at %s"
                                                           opencortex-url))
                                    ((memq status '(401 403)) "unauthorized; check the token")
                                    (t (format "HTTP %s %s" status
                                               (or (alist-get 'error data) ""))))))
                nil)))))))
    (current-buffer)))

(defun opencortex--chat-fetch-approvals (buf)
  "Show approvals still pending on the daemon in BUF (asynchronously)."
  (opencortex--request
   "GET" "/v1/approvals" nil
   (lambda (status data)
     (when (and status (< status 300) (buffer-live-p buf))
       (let ((pending (alist-get 'pending data)))
         (with-current-buffer buf
           (dolist (a pending)
             (let ((id (format "%s" (alist-get 'id a))))
               (unless (save-excursion
                         (goto-char (point-min))
                         (search-forward (format ":APPROVAL_ID: %s\n" id) nil t))
                 (save-excursion
                   (if opencortex--chat-pending
                       (goto-char (point-max))
                     (goto-char opencortex--chat-input-marker)
                     (beginning-of-line))
                   (insert (opencortex--format-approval a))))))))))))

(defun opencortex--chat-stop-polling ()
  "Stop polling for approvals in the current chat buffer."
  (when (timerp opencortex--chat-approval-timer)
    (cancel-timer opencortex--chat-approval-timer))
  (setq opencortex--chat-approval-timer nil))

(defun opencortex-chat-send ()
  "Send what was typed after the last prompt."
  (interactive)
  (let ((msg (opencortex--chat-input)))
    (if (string-empty-p msg)
        (message "OpenCortex: type a message after the prompt first")
      (opencortex-chat-send-message msg (current-buffer)))))

(defun opencortex-chat-reset ()
  "Start a new conversation (a new session) in the chat buffer."
  (interactive)
  (setq opencortex--chat-session nil)
  (message "OpenCortex: new session"))

;;;###autoload
(defun opencortex-chat ()
  "Open the OpenCortex chat buffer."
  (interactive)
  (let ((buf (opencortex--chat-buffer)))
    (pop-to-buffer buf)
    (goto-char (point-max))
    buf))

;;;; Approvals

(defun opencortex--approval-id-at-point ()
  "The id of the approval entry at point, or nil."
  (when (derived-mode-p 'org-mode)
    (save-excursion
      (ignore-errors (org-entry-get (point) "APPROVAL_ID" t)))))

(defun opencortex--read-approval-id (verb)
  "Ask which pending approval to VERB, or use the one at point."
  (or (opencortex--approval-id-at-point)
      (let* ((data (opencortex--check (opencortex--request-sync "GET" "/v1/approvals")
                                      "approvals"))
             (pending (alist-get 'pending data))
             (cands (mapcar (lambda (a)
                              (cons (format "%s  %s %s — %s" (alist-get 'id a)
                                            (alist-get 'tool a)
                                            (let ((args (alist-get 'args a)))
                                              (if (stringp args) args (json-encode args)))
                                            (or (alist-get 'reason a) ""))
                                    (format "%s" (alist-get 'id a))))
                            pending)))
        (unless cands (user-error "OpenCortex: nothing awaits approval"))
        (cdr (assoc (completing-read (format "%s which? " verb) cands nil t) cands)))))

(defun opencortex--decide (id approve)
  "Send the decision APPROVE (non-nil = yes) for the approval ID."
  (let ((res (opencortex--request-sync "POST" (format "/v1/approvals/%s" (url-hexify-string id))
                                       `((approve . ,(if approve t :json-false))))))
    (opencortex--check res "approval")
    (when (and (derived-mode-p 'org-mode)
               (equal (opencortex--approval-id-at-point) id))
      (save-excursion
        (ignore-errors
          (org-back-to-heading t)
          (when (looking-at "\\*+ APPROVAL")
            (replace-match (concat (substring (match-string 0) 0
                                              (- (length (match-string 0)) 8))
                                   (if approve "APPROVED" "DENIED")))))))
    (message "OpenCortex: %s %s" (if approve "approved" "denied") id)
    (cdr res)))

;;;###autoload
(defun opencortex-approve (id)
  "Approve the pending action ID (the one at point in the chat, or chosen)."
  (interactive (list (opencortex--read-approval-id "Approve")))
  (opencortex--decide id t))

;;;###autoload
(defun opencortex-deny (id)
  "Deny the pending action ID (the one at point in the chat, or chosen)."
  (interactive (list (opencortex--read-approval-id "Deny")))
  (opencortex--decide id nil))

;;;; Code trust

(defun opencortex--skill-names ()
  "The literate skills the daemon knows (untrusted and changed ones first)."
  (let* ((res (opencortex--request-sync "GET" "/v1/skills"))
         (rows (alist-get 'skills (opencortex--check res "skills")))
         (lit (seq-filter (lambda (r) (alist-get 'trust r)) rows)))
    (mapcar (lambda (r) (alist-get 'name r))
            (append (seq-remove (lambda (r) (equal (alist-get 'trust r) "trusted")) lit)
                    (seq-filter (lambda (r) (equal (alist-get 'trust r) "trusted")) lit)))))

(defun opencortex-trust-skill-request (name)
  "Ask the daemon to trust the literate skill NAME; (STATUS . DATA).
DATA's `approval' is the pending approval of kind \"trust skill\" (its
`args' carry the code, `sha256' and the `previous' trusted text), or nil
with a `reply'."
  (let ((res (opencortex--request-sync "POST" "/v1/skills/trust" `((name . ,name)))))
    (opencortex--check res "trust skill")
    res))

;;;###autoload
(defun opencortex-trust-skill (name)
  "Trust the literate skill NAME: show its exact code and what changed.
The diff is against the version you last trusted; saying yes approves the
daemon's \"trust skill\" approval.  A skill's code runs with your rights, so
only its approved bytes ever run."
  (interactive (list (completing-read "Trust skill: " (opencortex--skill-names) nil nil)))
  (let* ((data (cdr (opencortex-trust-skill-request name)))
         (a (alist-get 'approval data)))
    (if (not a)
        (message "OpenCortex: %s" (or (alist-get 'reply data) "nothing to approve"))
      (let ((buf (get-buffer-create "*opencortex trust*"))
            (args (alist-get 'args a)))
        (with-current-buffer buf
          (let ((inhibit-read-only t))
            (erase-buffer)
            (insert (or (alist-get 'reason a) "") "\n")
            (goto-char (point-min)))
          (special-mode))
        (display-buffer buf)
        (opencortex--decide
         (alist-get 'id a)
         (yes-or-no-p (format "Trust %s (sha256 %s…)? " (alist-get 'path args)
                              (substring (or (alist-get 'sha256 args) "") 0 16))))))))

;;;; Search, capture, recollect

(defun opencortex-search-hits (query &optional k)
  "The daemon's search hits for QUERY (at most K), as a list of alists."
  (let ((res (opencortex--request-sync
              "GET" (format "/v1/search?q=%s&k=%d" (url-hexify-string query)
                            (or k opencortex-search-results)))))
    (alist-get 'hits (opencortex--check res "search"))))

(defun opencortex--hit-label (hit)
  "A one-line description of the search HIT."
  (let ((outline (alist-get 'outline hit)))
    (format "%s  (%s:%s)"
            (if (and outline (listp outline))
                (mapconcat (lambda (x) (format "%s" x)) outline " / ")
              (or (alist-get 'title hit) "?"))
            (alist-get 'file hit) (alist-get 'line hit))))

(defun opencortex-visit-hit (hit)
  "Visit the file of the search HIT at its line."
  (let* ((file (alist-get 'file hit))
         (abs (if (file-name-absolute-p file) file
                (expand-file-name file (opencortex--memex-root)))))
    (find-file abs)
    (widen)
    (goto-char (point-min))
    (forward-line (1- (max 1 (or (alist-get 'line hit) 1))))
    (when (derived-mode-p 'org-mode) (org-show-context))
    (current-buffer)))

(defvar opencortex-search-history nil "History of `opencortex-search' queries.")

;;;###autoload
(defun opencortex-search (query)
  "Search the memex for QUERY and visit the chosen hit."
  (interactive (list (read-string "OpenCortex search: " nil 'opencortex-search-history)))
  (let* ((hits (opencortex-search-hits query))
         (cands (mapcar (lambda (h) (cons (opencortex--hit-label h) h)) hits)))
    (unless cands (user-error "OpenCortex: no hits for %S" query))
    (opencortex-visit-hit
     (cdr (assoc (completing-read "Hit: " cands nil t nil nil (caar cands)) cands)))))

;;;###autoload
(defun opencortex-capture (text)
  "Capture TEXT into the inbox (sends \"/gtd capture TEXT\" through the chat: the
command names its skill, so the router never guesses).
Interactively, the active region is the default."
  (interactive
   (list (read-string "Remember: "
                      (and (use-region-p)
                           (buffer-substring-no-properties (region-beginning) (region-end))))))
  (when (string-empty-p (string-trim text)) (user-error "Nothing to remember"))
  (let ((buf (opencortex--chat-buffer)))
    (opencortex-chat-send-message (concat "/gtd capture " text) buf)
    (display-buffer buf)
    buf))

;;;###autoload
(defun opencortex-recollect (text)
  "Recall past work you cannot name, from what you remember of it (TEXT).
Sends \"/recollect TEXT\" through the chat.  The answer is a story
quoting the records it opened (sessions, transcripts, commits, notes),
a question, or an offer to search wider; answer in the chat buffer
\(\"yes, that one\" identifies it)."
  (interactive (list (read-string "Recollect: ")))
  (let ((buf (opencortex--chat-buffer)))
    (opencortex-chat-send-message (concat "/recollect " text) buf)
    (display-buffer buf)
    buf))

;;;; Answers into notes, link suggestions

(defun opencortex--node-ref-at-point ()
  "A reference (id:ID, else FILE:LINE) to the memex heading at point, or nil."
  (when (and (derived-mode-p 'org-mode) buffer-file-name
             (opencortex--in-memex-p buffer-file-name))
    (save-excursion
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (let ((id (org-entry-get nil "ID")))
          (if id (concat "id:" id)
            (format "%s:%d" (opencortex--event-file buffer-file-name)
                    (line-number-at-pos))))))))

(defun opencortex--read-node (prompt)
  "Read a node reference with PROMPT, the heading at point as the default."
  (let* ((here (opencortex--node-ref-at-point))
         (got (read-string (if here (format "%s (default %s): " prompt here)
                             (format "%s: " prompt))
                           nil nil here)))
    (if (string-empty-p (string-trim got))
        (user-error "OpenCortex: no note given")
      (string-trim got))))

(defun opencortex--chat-command (text)
  "Send TEXT through the chat buffer and show it; return the buffer."
  (let ((buf (opencortex--chat-buffer)))
    (opencortex-chat-send-message text buf)
    (display-buffer buf)
    buf))

;;;; Asking your notes

(defun opencortex--heading-path-at-point ()
  "The note and heading of the memex heading at point, or nil.
For example \"Shakshuka / Method\"."
  (when (and (derived-mode-p 'org-mode) buffer-file-name
             (opencortex--in-memex-p buffer-file-name))
    (save-excursion
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (let ((path (mapcar #'substring-no-properties (org-get-outline-path t t))))
          ;; the note's title and the heading's own, as the answer cites them
          (mapconcat #'identity (delete-dups (list (car path) (car (last path))))
                     " / "))))))

;;;###autoload
(defun opencortex-ask (question)
  "Ask QUESTION of your notes; on a memex heading, about that heading.
The answer comes in the chat buffer from the notes that state it, each
cited (file:line as a link, id:).  With point on a heading of a memex
file, the heading's outline path goes with the question, so the note
under point is where the answer is looked for first."
  (interactive
   (let ((about (opencortex--heading-path-at-point)))
     (list (read-string (if about (format "Ask about %s: " about)
                          "Ask your notes: ")))))
  (when (string-empty-p (string-trim question))
    (user-error "OpenCortex: type a question"))
  (let ((about (opencortex--heading-path-at-point))
        (q (string-trim (replace-regexp-in-string "[\n\r]+" " " question))))
    ;; A leading "/" would make the question a chat command: it stays a question.
    (setq q (replace-regexp-in-string "\\`/+" "" q))
    (opencortex--chat-command (if about (format "%s (about: %s)" q about) q))))

;;;###autoload
(defun opencortex-save-answer (node)
  "File the chat's last answer, with its citations as Org links, under NODE.
NODE is an ID, FILE:LINE or a title (default: the heading at point).  The
daemon writes it through its guarded writer; `opencortex-unsave' undoes it."
  (interactive (list (opencortex--read-node "Save the last answer under")))
  (opencortex--chat-command (concat "/save " node)))

;;;###autoload
(defun opencortex-unsave ()
  "Undo the last `opencortex-save-answer' of this chat."
  (interactive)
  (opencortex--chat-command "/unsave"))

;;;###autoload
(defun opencortex-links-suggest (node)
  "List notes close in meaning to NODE that do not link with it yet.
Each comes with the passage that makes it close; link one with
`opencortex-link-suggestion'."
  (interactive (list (opencortex--read-node "Suggest links for")))
  (opencortex--chat-command (concat "/links " node)))

;;;###autoload
(defun opencortex-link-suggestion (n)
  "Add an id: link to suggestion N of the last `opencortex-links-suggest'."
  (interactive "nLink suggestion number: ")
  (opencortex--chat-command (format "/link %d" n)))

(provide 'opencortex)
;;; opencortex.el ends here
