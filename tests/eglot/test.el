;;; test.el --- Emacs eglot as a plain ask-lsp client, in batch  -*- lexical-binding: t -*-

;; One case per Emacs process, driven by tests/eglot/run.sh through the
;; environment:
;;   ASK_LSP_BIN         the ask-lsp binary
;;   EGLOT_CONFIG        "init" (:initializationOptions in eglot-server-programs)
;;                       or "workspace" (eglot-workspace-configuration in the
;;                       project's .dir-locals.el)
;;   EGLOT_SERVER_URL    the server to configure
;;   EGLOT_PROJECT       an empty directory to use as the project
;;   EGLOT_READY_FILE    written once ask-lsp is connected to the server
;;   EGLOT_EXPECT        text the question's prompt contains
;;   EGLOT_ANSWER        the option to choose, or ":RET" for what one Enter
;;                       at eglot's prompt takes (the pre-filled first action)
;;   EGLOT_COUNTER       the askLsp.status counter that says it was sent
;;                       (default answeredHere)
;;   EGLOT_FORBID        text no prompt may contain (a stranger's question)
;; The question is shown with eglot's own `window/showMessageRequest' handler,
;; which reads the choice with `completing-read': that is where the "person"
;; answers. Exits 0 when the answer was sent, 1 with a reason otherwise.

(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path dir))
(require 'eglot)
(require 'cl-lib)

(defun ask-test-env (name)
  (or (getenv name) (ask-test-fail "%s is not set" name)))

(defun ask-test-fail (format &rest args)
  (message "FAIL: %s" (apply #'format format args))
  (kill-emacs 1))

(defvar ask-test-prompts nil "Every prompt eglot showed, newest first.")

(defun ask-test-read-choice (prompt collection &optional _predicate _require-match initial-input &rest _)
  "Stands in for the person at `completing-read'."
  (push prompt ask-test-prompts)
  (message "prompt: %s | choices: %S | pre-filled: %S" prompt collection initial-input)
  (cond ((not (string-search (getenv "EGLOT_EXPECT") prompt))
	 ;; Anything else must not reach the agent: take the reject action.
	 (car (member "✗ Reject" collection)))
	;; RET on eglot's minibuffer takes what it pre-filled.
	((equal (getenv "EGLOT_ANSWER") ":RET") initial-input)
	(t (getenv "EGLOT_ANSWER"))))
(advice-add 'completing-read :override #'ask-test-read-choice)

(defun ask-test-wait (what seconds predicate)
  "Lets eglot work until PREDICATE holds; fails after SECONDS."
  (let ((deadline (+ (float-time) seconds)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (ask-test-fail "%s not within %s s; prompts: %S" what seconds ask-test-prompts))
      (accept-process-output nil 0.1))))

(defun ask-test-status (server)
  "ask-lsp's status, or nil while it is starting."
  (condition-case nil
      (jsonrpc-request server :workspace/executeCommand '(:command "askLsp.status"))
    (jsonrpc-error nil)))

(define-derived-mode ask-test-mode fundamental-mode "AskTest")

(condition-case err
    (let* ((bin (ask-test-env "ASK_LSP_BIN"))
	   (url (ask-test-env "EGLOT_SERVER_URL"))
	   (project (file-name-as-directory (ask-test-env "EGLOT_PROJECT")))
	   (servers (vector (list :url url)))
	   (config (ask-test-env "EGLOT_CONFIG"))
	   (forbid (ask-test-env "EGLOT_FORBID"))
	   (eglot-sync-connect t)
	   (eglot-connect-timeout 30)
	   (started (float-time))
	   server)
      (ask-test-env "EGLOT_EXPECT")
      (ask-test-env "EGLOT_ANSWER")
      (pcase config
	("init"
	 (setq eglot-server-programs
               `((ask-test-mode . (,bin :initializationOptions (:servers ,servers))))))
	("workspace"
	 (setq eglot-server-programs `((ask-test-mode . (,bin))))
	 ;; The usual place: directory-local variables of the project.
	 (with-temp-file (expand-file-name ".dir-locals.el" project)
	   (prin1 `((nil . ((eglot-workspace-configuration
                             . (:askLsp (:servers ,servers))))))
		  (current-buffer))))
	(_ (ask-test-fail "EGLOT_CONFIG must be init or workspace, got %s" config)))
      (find-file (expand-file-name "notes.ask" project))
      (ask-test-mode)
      (hack-dir-local-variables-non-file-buffer)
      ;; What M-x eglot does, without its prompts.
      (apply #'eglot (eglot--guess-contact))
      (setq server (eglot-current-server))
      (unless server (ask-test-fail "eglot did not connect"))
      (message "connected to ask-lsp in %.2f s" (- (float-time) started))
      (ask-test-wait "ask-lsp connected to the server" 30
                     (lambda ()
                       (let ((servers (plist-get (ask-test-status server) :servers)))
			 (and (= (length servers) 1)
                              (eq (plist-get (aref servers 0) :connected) t)))))
      (let ((status (aref (plist-get (ask-test-status server) :servers) 0)))
	(unless (equal (plist-get status :url) url)
	  (ask-test-fail "ask-lsp follows %s, not the configured %s" (plist-get status :url) url))
	(unless (eq (plist-get status :defaulted) :json-false)
	  (ask-test-fail "the configured server is marked defaulted: %S" status)))
      (write-region "" nil (ask-test-env "EGLOT_READY_FILE"))
      (setq started (float-time))
      (ask-test-wait "the question" 60
                     (lambda () (cl-some (lambda (p) (string-search (getenv "EGLOT_EXPECT") p))
					 ask-test-prompts)))
      (message "question shown %.2f s after ready" (- (float-time) started))
      (ask-test-wait "the answer sent" 30
                     (lambda ()
                       (let ((counters (plist-get (ask-test-status server) :counters))
			     (counter (intern (concat ":" (or (getenv "EGLOT_COUNTER") "answeredHere")))))
			 (>= (plist-get counters counter) 1))))
      ;; A moment for anything that should not come (the stranger's question).
      (let ((until (+ (float-time) 1)))
	(while (< (float-time) until) (accept-process-output nil 0.1)))
      (when-let ((stranger (cl-find-if (lambda (p) (string-search forbid p)) ask-test-prompts)))
	(ask-test-fail "a question from the default URL was shown: %s" stranger))
      (eglot-shutdown server)
      (message "OK")
      (kill-emacs 0))
  (error (ask-test-fail "%S" err)))

;;; test.el ends here
