;;; beside.el --- editors/emacs/README.md's eglot setup, as a person pastes it  -*- lexical-binding: t -*-

;; One case, driven by tests/eglot/run.sh through the environment:
;;   ASK_LSP_BIN         the ask-lsp binary (also on PATH as `ask-lsp')
;;   EGLOT_SERVER_URL    the agent server to follow
;;   EGLOT_PROJECT       an empty directory to use as the project
;;   EGLOT_READY_FILE    written once ask-lsp is connected to the server
;;   EGLOT_EXPECT        text the question's prompt contains
;;   EGLOT_ANSWER        the option to choose
;;   EGLOT_FORBID        text no prompt may contain (a stranger's question)
;; The project's files have a language server of their own (ask-lsp again,
;; following nothing, stands in for it). The README's eglot block is read
;; from the README and evaluated as written; `M-x ask-lsp' must start
;; ask-lsp beside that server, not instead of it, and the question it shows
;; is answered at `completing-read'. Exits 0 when the answer was sent and
;; the files' server is untouched, 1 with a reason otherwise.

(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path dir))
(require 'eglot)
(require 'cl-lib)

(defun ask-test-fail (format &rest args)
  (message "FAIL: %s" (apply #'format format args))
  (kill-emacs 1))

(defun ask-test-env (name)
  (or (getenv name) (ask-test-fail "%s is not set" name)))

(defvar ask-test-prompts nil "Every prompt eglot showed, newest first.")

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

(defun ask-test-status (server)
  (condition-case nil
      (jsonrpc-request server :workspace/executeCommand '(:command "askLsp.status"))
    (jsonrpc-error nil)))

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

;; The project's files and their own language server, as a person has them.
(define-derived-mode ask-test-code-mode prog-mode "Code")
(defconst ask-test-files-server
  (list (ask-test-env "ASK_LSP_BIN") "--stdio"
        :initializationOptions '(:servers [(:url "http://127.0.0.1:9")])))
(setq eglot-server-programs (list (cons 'ask-test-code-mode ask-test-files-server)))

(condition-case err
    (let* ((root (expand-file-name "../.." (file-name-directory load-file-name)))
           (readme (expand-file-name "editors/emacs/README.md" root))
           (url (ask-test-env "EGLOT_SERVER_URL"))
           (project (file-name-as-directory (ask-test-env "EGLOT_PROJECT")))
           (forbid (ask-test-env "EGLOT_FORBID"))
           (started (float-time))
           (eglot-sync-connect t)
           (eglot-connect-timeout 30)
           files-server ask-server)
      (ask-test-env "EGLOT_EXPECT")
      (ask-test-env "EGLOT_ANSWER")
      (unless (executable-find "ask-lsp") (ask-test-fail "ask-lsp is not on PATH"))
      ;; The README's block and its one setting, as an init file has them
      ;; after the person's own eglot setup.
      (eval (car (read-from-string (concat "(progn " (ask-test-readme-block readme "## eglot") ")"))) t)
      (setq ask-lsp-url url)
      (let ((default-directory project))
        (find-file (expand-file-name "main.code" project))
        (ask-test-code-mode)
        (call-interactively #'eglot)
        (setq files-server (eglot-current-server))
        (unless files-server (ask-test-fail "the files' server did not start"))
        (call-interactively #'ask-lsp))
      (setq ask-server (with-current-buffer (get-file-buffer (expand-file-name ".ask-lsp" project))
                         (eglot-current-server)))
      (unless ask-server (ask-test-fail "M-x ask-lsp started no server"))
      (when (eq ask-server files-server) (ask-test-fail "ask-lsp took the files' server's place"))
      (ask-test-wait "ask-lsp connected to the server" 30
                     (lambda ()
                       (let ((servers (plist-get (ask-test-status ask-server) :servers)))
                         (and (= (length servers) 1)
                              (equal (plist-get (aref servers 0) :url) url)
                              (eq (plist-get (aref servers 0) :connected) t)))))
      (message "connected to ask-lsp in %.2f s" (- (float-time) started))
      (write-region "" nil (ask-test-env "EGLOT_READY_FILE"))
      (setq started (float-time))
      (ask-test-wait "the question" 60
                     (lambda () (cl-some (lambda (p) (string-search (getenv "EGLOT_EXPECT") p))
                                         ask-test-prompts)))
      (message "question shown %.2f s after ready" (- (float-time) started))
      (ask-test-wait "the answer sent" 30
                     (lambda ()
                       (let ((counters (plist-get (ask-test-status ask-server) :counters)))
                         (>= (plist-get counters :answeredHere) 1))))
      ;; Beside, not instead: the file is still managed by its own server,
      ;; which still runs, and its entry in eglot-server-programs is as it was.
      (with-current-buffer (get-file-buffer (expand-file-name "main.code" project))
        (unless (eq (eglot-current-server) files-server)
          (ask-test-fail "the file lost its own language server")))
      (unless (jsonrpc-running-p files-server) (ask-test-fail "the files' server stopped"))
      ;; The file's server is the person's (the stand-in follows port 9).
      (let ((followed (plist-get (aref (plist-get (ask-test-status files-server) :servers) 0) :url)))
        (unless (equal followed "http://127.0.0.1:9")
          (ask-test-fail "the file's server is not its own: it follows %s" followed)))
      (unless (equal (alist-get 'ask-test-code-mode eglot-server-programs) ask-test-files-server)
        (ask-test-fail "the files' entry in eglot-server-programs changed: %S" eglot-server-programs))
      (when-let ((stranger (cl-find-if (lambda (p) (string-search forbid p)) ask-test-prompts)))
        (ask-test-fail "a question from the default URL was shown: %s" stranger))
      (eglot-shutdown ask-server)
      (eglot-shutdown files-server)
      (message "OK")
      (kill-emacs 0))
  (error (ask-test-fail "%S" err)))
