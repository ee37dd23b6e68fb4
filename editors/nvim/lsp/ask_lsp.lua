-- ask-lsp as a plain language server, for Neovim 0.11's vim.lsp.config:
-- with `ask-lsp` on $PATH and this directory on 'runtimepath' (no setup{}),
--   vim.lsp.enable('ask_lsp')
-- shows agent questions through window/showMessageRequest (vim.ui.select)
-- and offers code actions and askLsp.* commands. Configure with
--   vim.lsp.config('ask_lsp', { init_options = { servers = { { url = '…' } } } })
-- or $ASK_LSP_URL. The plugin (require('ask-lsp').setup{}) starts its own
-- client with the richer askQuestions extension; use one or the other.
--
-- ask-lsp is a sidecar: it follows agent servers, not a project, and needs
-- no root. Without filetypes it attaches to every file buffer, so its code
-- actions answer from anywhere; without root_dir or root_markers there are
-- no workspace folders, and Neovim's default reuse_client then shares one
-- ask-lsp process between all buffers.
---@type vim.lsp.Config
return {
  cmd = { 'ask-lsp' },
}
