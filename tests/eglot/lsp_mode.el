;;; lsp_mode.el --- editors/emacs/README.md's lsp-mode setup, as a person pastes it  -*- lexical-binding: t -*-

;; One case, driven by tests/eglot/run.sh with the environment beside.el
;; takes (EGLOT_SERVER_URL must be a simulated server: its /_sim/log tells
;; when the answer arrived). The project's files have a main language server
;; of their own (ask-lsp following nothing stands in for it); the README's
;; lsp-mode block, evaluated as written with the URL changed, must add
;; ask-lsp beside it, and the question it shows is answered at
;; `completing-read'. Exits 0 when the server received an answer and both
;; servers manage the file, 1 with a reason otherwise.

(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path dir))
(require 'lsp-mode)
(require 'url)
(require 'cl-lib)

(defun ask-test-fail (format &rest args)
  (message "FAIL: %s" (apply #'format format args))
  (kill-emacs 1))

(defun ask-test-env (name)
  (or (getenv name) (ask-test-fail "%s is not set" name)))

(defvar ask-test-prompts nil "Every prompt lsp-mode showed, newest first.")

(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (push prompt ask-test-prompts)
              (message "prompt: %s | choices: %S" prompt collection)
              (if (string-search (getenv "EGLOT_EXPECT") prompt)
                  (getenv "EGLOT_ANSWER")
                (car (last collection)))))

(defun ask-test-wait (what seconds predicate)
  (let ((deadline (+ (float-time) seconds)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (ask-test-fail "%s not within %s s; prompts: %S" what seconds ask-test-prompts))
      (accept-process-output nil 0.1))))

(defun ask-test-readme-block (readme heading)
  "The first elisp block after HEADING in README, as written there."
  (with-temp-buffer
    (insert-file-contents readme)
    (goto-char (point-min))
    (unless (search-forward (concat "\n" heading "\n") nil t)
      (ask-test-fail "no %s section in %s" heading readme))
    (let ((start (progn (search-forward "```elisp\n") (point))))
      (search-forward "\n```")
      (buffer-substring start (match-beginning 0)))))

(defun ask-test-sim-log (url)
  (with-current-buffer (url-retrieve-synchronously (concat url "/_sim/log") t t 5)
    (goto-char (point-min))
    (re-search-forward "\n\n")
    (prog1 (json-parse-buffer :array-type 'list) (kill-buffer))))

(setq lsp-session-file (make-temp-file "lsp-session")
      lsp-keep-workspace-alive nil
      lsp-enable-file-watchers nil
      lsp-restart 'ignore)

;; The project's files and their own language server, as a person has them.
(define-derived-mode ask-test-code-mode prog-mode "Code")
(add-to-list 'lsp-language-id-configuration '(ask-test-code-mode . "code"))
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (list (ask-test-env "ASK_LSP_BIN") "--stdio"))
  :major-modes '(ask-test-code-mode)
  :server-id 'ask-test-files
  :initialization-options '(:servers [(:url "http://127.0.0.1:9")])))

(condition-case err
    (let* ((root (expand-file-name "../.." (file-name-directory load-file-name)))
           (readme (expand-file-name "editors/emacs/README.md" root))
           (url (ask-test-env "EGLOT_SERVER_URL"))
           (project (file-name-as-directory (ask-test-env "EGLOT_PROJECT")))
           (forbid (ask-test-env "EGLOT_FORBID"))
           (started (float-time))
           (block (ask-test-readme-block readme "## lsp-mode")))
      (ask-test-env "EGLOT_EXPECT")
      (ask-test-env "EGLOT_ANSWER")
      (unless (executable-find "ask-lsp") (ask-test-fail "ask-lsp is not on PATH"))
      (unless (string-search "\"http://127.0.0.1:4096\"" block)
        (ask-test-fail "the lsp-mode block names no http://127.0.0.1:4096 to change"))
      (eval (car (read-from-string
                  (concat "(progn "
                          (string-replace "\"http://127.0.0.1:4096\"" (prin1-to-string url) block)
                          ")")))
            t)
      ;; Otherwise lsp-mode asks which root to import.
      (lsp-workspace-folders-add project)
      (find-file (expand-file-name "main.code" project))
      (ask-test-code-mode)
      (lsp)
      (ask-test-wait "both servers to start" 30
                     (lambda ()
                       (let ((ids (mapcar (lambda (w) (lsp--client-server-id (lsp--workspace-client w)))
                                          (lsp-workspaces))))
                         (and (memq 'ask-lsp ids) (memq 'ask-test-files ids)
                              (cl-every (lambda (w) (eq (lsp--workspace-status w) 'initialized))
                                        (lsp-workspaces))))))
      (message "connected to ask-lsp in %.2f s" (- (float-time) started))
      (write-region "" nil (ask-test-env "EGLOT_READY_FILE"))
      (setq started (float-time))
      (ask-test-wait "the question" 60
                     (lambda () (cl-some (lambda (p) (string-search (getenv "EGLOT_EXPECT") p))
                                         ask-test-prompts)))
      (message "question shown %.2f s after ready" (- (float-time) started))
      (ask-test-wait "the answer to reach the server" 30
                     (lambda () (ask-test-sim-log url)))
      (when-let ((stranger (cl-find-if (lambda (p) (string-search forbid p)) ask-test-prompts)))
        (ask-test-fail "a question from the default URL was shown: %s" stranger))
      (unless (= (length (lsp-workspaces)) 2)
        (ask-test-fail "the file is not managed by both servers: %S" (lsp-workspaces)))
      (message "OK")
      (kill-emacs 0))
  (error (ask-test-fail "%S" err)))
