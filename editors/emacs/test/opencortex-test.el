;;; opencortex-test.el --- ERT tests for opencortex.el  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run with:
;;
;;   emacs -Q --batch -L editors/emacs -l editors/emacs/test/opencortex-test.el \
;;         -f ert-run-tests-batch-and-exit
;;
;; Tests tagged `daemon' talk to a real `opencortex serve' and are skipped
;; unless these are set (tests/emacs/test_emacs_package.py sets them):
;;
;;   OPENCORTEX_TEST_URL    base URL of the daemon, e.g. http://127.0.0.1:8765
;;   OPENCORTEX_TEST_MEMEX  the (private, writable) memex the daemon serves
;;   OPENCORTEX_TOKEN       the daemon's token

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'opencortex)

(defconst opencortex-test--source
  (locate-library "opencortex.el" t)
  "The package source under test.")

(defun opencortex-test--daemon-p ()
  "Non-nil when a daemon to test against was given in the environment."
  (and (getenv "OPENCORTEX_TEST_URL") (getenv "OPENCORTEX_TEST_MEMEX")))

(defmacro opencortex-test--with-daemon (&rest body)
  "Run BODY against the daemon from the environment, or skip the test."
  (declare (indent 0) (debug t))
  `(progn
     (skip-unless (opencortex-test--daemon-p))
     (let ((opencortex-url (getenv "OPENCORTEX_TEST_URL"))
           (opencortex-memex-directory (getenv "OPENCORTEX_TEST_MEMEX"))
           (opencortex-token nil)
           (opencortex-token-file "/nonexistent/opencortex-token")
           (auth-sources nil)
           (opencortex-answer-poll-interval 0.2))
       ,@body)))

(defun opencortex-test--wait-until (pred timeout &optional step)
  "Wait until PRED returns non-nil, at most TIMEOUT seconds; return its value.
Timers and process output are serviced while waiting; PRED is called every
STEP seconds (default 0.1)."
  (let ((deadline (+ (float-time) timeout))
        (step (or step 0.1))
        (value nil))
    (while (and (not (setq value (funcall pred)))
                (< (float-time) deadline))
      (accept-process-output nil step)
      (sleep-for 0.01))
    value))

(defun opencortex-test--kill-file-buffer (file)
  "Kill the buffer visiting FILE without questions."
  (let ((buf (get-file-buffer file)))
    (when buf
      (with-current-buffer buf (set-buffer-modified-p nil))
      (kill-buffer buf))))

;;;; Without a daemon

(ert-deftest opencortex-test-byte-compiles-cleanly ()
  "The package byte-compiles without any warning."
  (let* ((dir (make-temp-file "opencortex-bc" t))
         (copy (expand-file-name "opencortex.el" dir))
         (byte-compile-error-on-warn t)
         (byte-compile-dest-file-function
          (lambda (f) (concat (file-name-sans-extension f) ".elc"))))
    (unwind-protect
        (progn
          (copy-file opencortex-test--source copy)
          (should (byte-compile-file copy))
          (should (file-exists-p (concat (file-name-sans-extension copy) ".elc"))))
      (delete-directory dir t))))

(ert-deftest opencortex-test-token-lookup ()
  "The token comes from the variable, auth-source, the environment, then the file."
  (let* ((dir (make-temp-file "opencortex-tok" t))
         (file (expand-file-name "token" dir))
         (netrc (expand-file-name "authinfo" dir))
         (process-environment (copy-sequence process-environment))
         (opencortex-url "http://127.0.0.1:8765")
         (opencortex-token nil)
         (opencortex-token-file file)
         (auth-sources nil))
    (unwind-protect
        (progn
          (setenv "OPENCORTEX_TOKEN" nil)
          (should-not (opencortex-get-token))
          (with-temp-file file (insert "from-file\n"))
          (should (equal (opencortex-get-token) "from-file"))
          (setenv "OPENCORTEX_TOKEN" "from-env")
          (should (equal (opencortex-get-token) "from-env"))
          (with-temp-file netrc
            (insert "machine 127.0.0.1 login opencortex password from-auth-source\n"))
          (let ((auth-sources (list netrc)))
            (auth-source-forget-all-cached)
            (should (equal (opencortex-get-token) "from-auth-source")))
          (auth-source-forget-all-cached)
          (let ((opencortex-token "explicit"))
            (should (equal (opencortex-get-token) "explicit"))))
      (auth-source-forget-all-cached)
      (delete-directory dir t))))

(ert-deftest opencortex-test-token-from-environment-of-the-run ()
  "When the test run has OPENCORTEX_TOKEN, that is what is found."
  (skip-unless (getenv "OPENCORTEX_TOKEN"))
  (let ((opencortex-token nil)
        (auth-sources nil)
        (opencortex-token-file "/nonexistent/opencortex-token"))
    (should (equal (opencortex-get-token) (string-trim (getenv "OPENCORTEX_TOKEN"))))))

(ert-deftest opencortex-test-linkify ()
  "Citations become Org links; existing links are kept."
  (let ((opencortex-memex-directory "/tmp/memex"))
    (should (equal (opencortex-linkify "see (notes/crdt.org:5)")
                   "see ([[file:/tmp/memex/notes/crdt.org::5][notes/crdt.org:5]])"))
    (should (equal (opencortex-linkify "(notes/crdt.org:5, id:67e3b379-ea46-4929)")
                   (concat "([[file:/tmp/memex/notes/crdt.org::5][notes/crdt.org:5]], "
                           "[[id:67e3b379-ea46-4929]])")))
    (should (equal (opencortex-linkify "the [[id:abc-1][local-first]] bit")
                   "the [[id:abc-1][local-first]] bit"))
    (should (equal (opencortex-linkify "[[file:/x/a.org::3][a.org:3]]")
                   "[[file:/x/a.org::3][a.org:3]]"))
    (should (equal (opencortex-linkify "no citation here") "no citation here"))))

(ert-deftest opencortex-test-render-reply-quotes-headlines ()
  "Headlines inside a reply do not become entries of the chat buffer."
  (let ((opencortex-memex-directory "/tmp/memex"))
    (should (equal (opencortex-render-reply "* CRDTs\n#+TITLE: x\ntext (a.org:2)\n")
                   "  * CRDTs\n  #+TITLE: x\ntext ([[file:/tmp/memex/a.org::2][a.org:2]])"))))

(ert-deftest opencortex-test-links-open-with-org ()
  "A rendered citation opens the file at the line with `org-open-at-point'."
  (let* ((dir (make-temp-file "opencortex-memex" t))
         (opencortex-memex-directory dir)
         (note (expand-file-name "notes/x.org" dir)))
    (unwind-protect
        (progn
          (make-directory (file-name-directory note) t)
          (with-temp-file note (insert "* A\none\n* B\ntwo\n"))
          (with-temp-buffer
            (org-mode)
            (insert (opencortex-render-reply "see notes/x.org:3"))
            (goto-char (point-min))
            (search-forward "[[file:")
            (let ((org-link-frame-setup '((file . find-file))))
              (org-open-at-point))
            (should (equal (file-truename buffer-file-name) (file-truename note))))
          (with-current-buffer (get-file-buffer note)
            (should (= (line-number-at-pos) 3))))
      (opencortex-test--kill-file-buffer note)
      (delete-directory dir t))))

(ert-deftest opencortex-test-global-mode-only-in-memex ()
  "`opencortex-global-mode' turns the mode on in memex Org buffers only."
  (let* ((dir (make-temp-file "opencortex-memex" t))
         (other (make-temp-file "opencortex-other" t))
         (opencortex-memex-directory dir)
         (opencortex-url "http://127.0.0.1:1")
         (inside (expand-file-name "a.org" dir))
         (outside (expand-file-name "b.org" other)))
    (unwind-protect
        (progn
          (opencortex-global-mode 1)
          (with-current-buffer (find-file-noselect inside)
            (should opencortex-mode))
          (with-current-buffer (find-file-noselect outside)
            (should-not opencortex-mode)))
      (opencortex-global-mode -1)
      (opencortex-test--kill-file-buffer inside)
      (opencortex-test--kill-file-buffer outside)
      (delete-directory dir t)
      (delete-directory other t))))

(ert-deftest opencortex-test-save-does-not-block-without-daemon ()
  "Saving with no daemon listening neither blocks nor signals."
  (let* ((dir (make-temp-file "opencortex-memex" t))
         (opencortex-memex-directory dir)
         (opencortex-url "http://127.0.0.1:1")
         (file (expand-file-name "a.org" dir))
         (start (float-time)))
    (unwind-protect
        (with-current-buffer (find-file-noselect file)
          (org-mode)
          (opencortex-mode 1)
          (insert "* Something\n")
          (save-buffer)
          (should (< (- (float-time) start) 5))
          (opencortex-test--wait-until (lambda () nil) 0.3))
      (opencortex-test--kill-file-buffer file)
      (delete-directory dir t))))

(ert-deftest opencortex-test-revert-when-changed-on-disk ()
  "An unmodified buffer is reverted when its file changed; a modified one is not."
  (let* ((dir (make-temp-file "opencortex-memex" t))
         (file (expand-file-name "a.org" dir)))
    (unwind-protect
        (progn
          (with-temp-file file (insert "* One\n"))
          (with-current-buffer (find-file-noselect file)
            (should-not (opencortex-revert-if-changed))
            (sleep-for 1.1)
            (with-temp-file file (insert "* One\n** Answer: two\n"))
            (should (opencortex-revert-if-changed))
            (should (string-match-p "Answer: two" (buffer-string)))
            (sleep-for 1.1)
            (with-temp-file file (insert "* Changed again\n"))
            (cl-letf (((symbol-function 'userlock--ask-user-about-supersession-threat)
                        #'ignore))
              (set-buffer-modified-p t))  ; as if the person were typing
            (should-not (opencortex-revert-if-changed))))
      (opencortex-test--kill-file-buffer file)
      (delete-directory dir t))))

;;;; Against a real daemon

(ert-deftest opencortex-test-daemon-health ()
  "The daemon answers /healthz."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (should (opencortex-health))))

(ert-deftest opencortex-test-daemon-bad-token-refused ()
  "A wrong token is an `unauthorized' user-error, not a hang."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((opencortex-token "wrong-token"))
      (should (eql (car (opencortex--request-sync "GET" "/v1/approvals" nil 20)) 401)))))

(ert-deftest opencortex-test-daemon-search ()
  "The search backend returns hits for \"caching\"."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((hits (opencortex-search-hits "caching")))
      (should (consp hits))
      (should (alist-get 'file (car hits)))
      (should (alist-get 'line (car hits)))
      ;; which of several title matches ranks first is the store's to decide
      (should (seq-some (lambda (h) (string-match-p "caching"
                                                    (downcase (opencortex--hit-label h))))
                        hits)))))

(ert-deftest opencortex-test-daemon-search-visits-hit ()
  "Visiting a hit opens its file at its line."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let* ((hit (car (opencortex-search-hits "caching")))
           (buf (opencortex-visit-hit hit)))
      (unwind-protect
          (with-current-buffer buf
            (should (= (line-number-at-pos) (alist-get 'line hit)))
            (should (file-in-directory-p buffer-file-name opencortex-memex-directory)))
        (kill-buffer buf)))))

(ert-deftest opencortex-test-daemon-point-update ()
  "A point-update event is accepted."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let (result)
      (opencortex-send-event '((sensor . "point-update") (file . "notes/crdt.org") (line . 5))
                             (lambda (status data) (setq result (cons status data))))
      (should (opencortex-test--wait-until (lambda () result) 30))
      (should (eql (car result) 202))
      (should (alist-get 'accepted (cdr result))))))

(ert-deftest opencortex-test-daemon-save-sends-buffer-update ()
  "Saving an Org buffer in the memex indexes its new text."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((file (expand-file-name "notes/emacs-save-test.org" opencortex-memex-directory)))
      (unwind-protect
          (progn
            (with-current-buffer (find-file-noselect file)
              (org-mode)
              (opencortex-mode 1)
              (insert "* Quixotic zymurgy notebook\nBrewing notes about zymurgy.\n")
              (save-buffer))
            ;; semantic neighbours answer any query: wait for a hit from this file
            (should (opencortex-test--wait-until
                     (lambda ()
                       (cl-some (lambda (h)
                                  (string-match-p "emacs-save-test"
                                                  (or (alist-get 'file h) "")))
                                (opencortex-search-hits "zymurgy")))
                     60 0.5)))
        (opencortex-test--kill-file-buffer file)))))

(ert-deftest opencortex-test-daemon-agent-headline-answered ()
  "A saved @agent headline is answered in the file and the buffer shows it."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((file (expand-file-name "notes/emacs-agent-test.org" opencortex-memex-directory)))
      (unwind-protect
          (with-current-buffer (find-file-noselect file)
            (org-mode)
            (opencortex-mode 1)
            (insert "* @agent what do my notes say about CRDTs?\n")
            (save-buffer)
            (should (opencortex-test--wait-until
                     (lambda ()
                       (let ((text (buffer-string)))
                         (and (string-match-p ":AGENT_HANDLED:" text)
                              (string-match-p "^\\*\\*+ Answer:" text))))
                     180 0.2))
            (should-not (buffer-modified-p))
            (should opencortex-mode)
            (should (string-match-p "CRDT" (buffer-string))))
        (opencortex-test--kill-file-buffer file)))))

(ert-deftest opencortex-test-daemon-chat-reply-with-link ()
  "The chat sends a message and inserts a reply containing an Org link."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((opencortex-chat-buffer-name "*opencortex-test-chat*"))
      (unwind-protect
          (with-current-buffer (opencortex-chat)
            (goto-char (point-max))
            (insert "what do my notes say about caching?")
            (opencortex-chat-send)
            (should opencortex--chat-pending)
            (should (opencortex-test--wait-until
                     (lambda () (not opencortex--chat-pending)) 180))
            (let ((text (buffer-string)))
              (should (string-match-p "^\\* You: what do my notes say about caching\\?" text))
              (should (string-match-p "^\\*\\* OpenCortex" text))
              (should (string-match-p "\\[\\[\\(file:/[^]]+\\.org::[0-9]+\\|id:[^]]+\\)\\]"
                                      text))
              (should-not (string-match-p "(error:" text)))
            (should opencortex--chat-session)
            ;; A new prompt awaits the next message.
            (should (string-suffix-p "* You: " (buffer-string)))
            ;; The first file link opens the cited file.
            (goto-char (point-min))
            (when (re-search-forward "\\[\\[file:" nil t)
              (let ((org-link-frame-setup '((file . find-file))))
                (org-open-at-point))
              (should (string-suffix-p ".org" buffer-file-name))
              (should (file-in-directory-p buffer-file-name opencortex-memex-directory))
              (kill-buffer)))
        (when (get-buffer opencortex-chat-buffer-name)
          (kill-buffer opencortex-chat-buffer-name))))))

(ert-deftest opencortex-test-daemon-chat-approval-deny ()
  "An action needing approval shows up in the chat while the reply waits; deny it."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((opencortex-chat-buffer-name "*opencortex-test-approval*")
          (opencortex-approval-poll-interval 0.3))
      (unwind-protect
          (with-current-buffer (opencortex-chat)
            (opencortex-chat-send-message "run git status")
            (should (opencortex-test--wait-until
                     (lambda () (string-match-p ":APPROVAL_ID:" (buffer-string))) 60))
            (should opencortex--chat-pending)
            (goto-char (point-max))
            (re-search-backward "^\\*+ APPROVAL")
            (let ((id (opencortex--approval-id-at-point)))
              (should id)
              (should (member id (mapcar (lambda (a) (alist-get 'id a))
                                         (alist-get 'pending
                                                    (cdr (opencortex--request-sync
                                                          "GET" "/v1/approvals"))))))
              (opencortex-deny id))
            (should (save-excursion (goto-char (point-min))
                                    (re-search-forward "^\\*+ DENIED" nil t)))
            (should (opencortex-test--wait-until
                     (lambda () (not opencortex--chat-pending)) 60))
            (should-not (string-match-p "(error:" (buffer-string)))
            (should (string-suffix-p "* You: " (buffer-string))))
        (when (get-buffer opencortex-chat-buffer-name)
          (with-current-buffer opencortex-chat-buffer-name
            (opencortex--chat-stop-polling))
          (kill-buffer opencortex-chat-buffer-name))))))

(ert-deftest opencortex-test-daemon-trust-skill ()
  "A planted literate skill runs only after `opencortex-trust-skill' shows its
code and the person says yes (through the daemon's approvals)."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let* ((dir (expand-file-name "skills" (getenv "OPENCORTEX_TEST_MEMEX")))
           (file (expand-file-name "ert-hello.org" dir))
           (code "SKILL = Skill('ert-hello', 10, trigger=lambda c: False)")
           (shown nil)
           (trust (lambda ()
                    (alist-get 'trust
                               (seq-find (lambda (r) (equal (alist-get 'name r) "ert-hello"))
                                         (alist-get 'skills (cdr (opencortex--request-sync
                                                                  "GET" "/v1/skills"))))))))
      (make-directory dir t)
      (with-temp-file file
        (insert "#+TITLE: Skill: ert-hello\n#+begin_src python\n" code "\n#+end_src\n"))
      (should (equal (funcall trust) "untrusted"))
      (cl-letf (((symbol-function 'yes-or-no-p)
                 (lambda (_prompt)
                   (setq shown (with-current-buffer "*opencortex trust*" (buffer-string)))
                   nil)))
        (opencortex-trust-skill "ert-hello"))
      (should (string-match-p (regexp-quote code) shown))
      (should (equal (funcall trust) "untrusted"))
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_prompt) t)))
        (opencortex-trust-skill "ert-hello"))
      (should (opencortex-test--wait-until
               (lambda () (equal (funcall trust) "trusted")) 60)))))

(ert-deftest opencortex-test-daemon-capture-and-recollect ()
  "Capture and recollect go through the chat and get replies."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((opencortex-chat-buffer-name "*opencortex-test-capture*"))
      (unwind-protect
          (let ((buf (opencortex-capture "Buy zanzibar cloves for the shakshuka")))
            (with-current-buffer buf
              (should (opencortex-test--wait-until
                       (lambda () (not opencortex--chat-pending)) 120))
              (should (string-match-p "^\\* You: /gtd capture Buy zanzibar" (buffer-string)))
              (should-not (string-match-p "(error:" (buffer-string)))
              (opencortex-recollect "shakshuka")
              (should (opencortex-test--wait-until
                       (lambda () (not opencortex--chat-pending)) 120))
              (should (string-match-p "^\\* You: /recollect shakshuka" (buffer-string)))
              (should-not (string-match-p "(error:" (buffer-string)))))
        (when (get-buffer opencortex-chat-buffer-name)
          (kill-buffer opencortex-chat-buffer-name))))))

(ert-deftest opencortex-test-daemon-ask-about-the-heading-at-point ()
  "A question asked on a memex heading is answered from that note, cited."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let* ((opencortex-chat-buffer-name "*opencortex-test-ask*")
           (file (expand-file-name "notes/shakshuka.org" opencortex-memex-directory)))
      (unwind-protect
          (progn
            (with-current-buffer (find-file-noselect file)
              (goto-char (point-min))
              (re-search-forward "^\\*\\* Method")
              (forward-line 2)
              (should (equal (opencortex--heading-path-at-point) "Shakshuka / Method"))
              (opencortex-ask "how long do I simmer the tomatoes?"))
            (with-current-buffer opencortex-chat-buffer-name
              (should (opencortex-test--wait-until
                       (lambda () (not opencortex--chat-pending)) 180))
              (let ((text (buffer-string)))
                (should (string-match-p
                         "^\\* You: how long do I simmer the tomatoes\\? (about: Shakshuka / Method)"
                         text))
                (should (string-match-p "simmer 10 min" text))
                (should (string-match-p "\\[\\[file:/[^]]+/notes/shakshuka\\.org::[0-9]+\\]" text))
                (should-not (string-match-p "(error:" text)))))
        (opencortex-test--kill-file-buffer file)
        (when (get-buffer opencortex-chat-buffer-name)
          (kill-buffer opencortex-chat-buffer-name))))))

(defconst opencortex-test--rag-id "b632cd44-5843-4242-b14f-c5f9636af2b2"
  "The ID of the example memex's RAG note.")

(defun opencortex-test--file-text (file)
  "The text of FILE on disk."
  (with-temp-buffer (insert-file-contents file) (buffer-string)))

(ert-deftest opencortex-test-daemon-save-answer-under-node-and-unsave ()
  "The last answer is filed under the heading at point, with Org links; unsave undoes it."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let* ((opencortex-chat-buffer-name "*opencortex-test-save*")
           (file (expand-file-name "notes/retrieval-augmented-generation.org"
                                   opencortex-memex-directory))
           (before (opencortex-test--file-text file)))
      (unwind-protect
          (let ((chat (opencortex-chat)))
            (opencortex-chat-send-message "search my notes for reciprocal rank fusion" chat)
            (should (opencortex-test--wait-until
                     (lambda () (not (buffer-local-value 'opencortex--chat-pending chat)))
                     180))
            (with-current-buffer (find-file-noselect file)
              (goto-char (point-min))
              (re-search-forward "^\\* Retrieval-augmented generation")
              (should (equal (opencortex--node-ref-at-point)
                             (concat "id:" opencortex-test--rag-id)))
              (opencortex-save-answer (opencortex--node-ref-at-point)))
            (should (opencortex-test--wait-until
                     (lambda () (not (buffer-local-value 'opencortex--chat-pending chat)))
                     180))
            (should (string-match-p "Saved the answer under"
                                    (with-current-buffer chat (buffer-string))))
            (let ((after (opencortex-test--file-text file)))
              (should (string-match-p
                       "^\\*\\* Answer: search my notes for reciprocal rank fusion" after))
              (should (string-match-p "^Sources:\n- \\[\\[\\(id\\|file\\):" after))
              (with-temp-buffer
                (insert after)
                (org-mode)
                (goto-char (point-min))
                (re-search-forward "^\\*\\* Answer: search my notes")
                (should (= (org-current-level) 2))))
            (opencortex-unsave)
            (should (opencortex-test--wait-until
                     (lambda () (not (buffer-local-value 'opencortex--chat-pending chat)))
                     120))
            (should (equal (opencortex-test--file-text file) before)))
        (opencortex-test--kill-file-buffer file)
        (when (get-buffer opencortex-chat-buffer-name)
          (kill-buffer opencortex-chat-buffer-name))))))

(defun opencortex-test--files-of-ids (ids root)
  "The files under ROOT that define any of IDS."
  (let (out)
    (dolist (f (directory-files-recursively root "\\.org\\'"))
      (with-temp-buffer
        (insert-file-contents f)
        (dolist (id ids)
          (goto-char (point-min))
          (when (re-search-forward (concat "^:ID: +" (regexp-quote id) "$") nil t)
            (push (file-relative-name f root) out)))))
    (delete-dups out)))

(ert-deftest opencortex-test-daemon-links-suggest-excludes-linked-notes ()
  "Suggestions never name a note the node already links to; /link N adds an id: link."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let* ((opencortex-chat-buffer-name "*opencortex-test-links*")
           (root (file-name-as-directory (expand-file-name opencortex-memex-directory)))
           (file (expand-file-name "notes/retrieval-augmented-generation.org" root))
           (ids (let (acc (text (opencortex-test--file-text file)) (pos 0))
                  (while (string-match "\\[\\[id:\\([^]]+\\)\\]" text pos)
                    (push (match-string 1 text) acc)
                    (setq pos (match-end 0)))
                  acc))
           (linked (remove "notes/retrieval-augmented-generation.org"
                           (opencortex-test--files-of-ids ids root))))
      (should linked)
      (unwind-protect
          (let ((chat (opencortex-links-suggest (concat "id:" opencortex-test--rag-id))))
            (should (opencortex-test--wait-until
                     (lambda () (not (buffer-local-value 'opencortex--chat-pending chat)))
                     600))
            (let ((text (with-current-buffer chat (buffer-string))))
              (should (string-match-p "Notes close to" text))
              (should (string-match-p "^1\\. " text))
              (dolist (f linked)
                (should-not (string-match-p (regexp-quote (concat "(" f ":")) text))))
            (opencortex-link-suggestion 1)
            (should (opencortex-test--wait-until
                     (lambda () (not (buffer-local-value 'opencortex--chat-pending chat)))
                     180))
            (should (string-match-p "^Linked to \\[\\[id:"
                                    (with-current-buffer chat (buffer-string))))
            (should (string-match-p "- See also: \\[\\[id:"
                                    (opencortex-test--file-text file))))
        (when (get-buffer opencortex-chat-buffer-name)
          (kill-buffer opencortex-chat-buffer-name))))))

(ert-deftest opencortex-test-daemon-recall-answers ()
  "POST /v1/recall runs a round of recall and says which state it left."
  :tags '(daemon)
  (opencortex-test--with-daemon
    (let ((res (opencortex--request-sync
                "POST" "/v1/recall" '((cue . "that note about cache invalidation")) 60)))
      (should (equal (car res) 200))
      (should (member (alist-get 'state (cdr res)) '("presented" "asked"))))))

(provide 'opencortex-test)
;;; opencortex-test.el ends here
