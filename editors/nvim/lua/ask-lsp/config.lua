-- Options given to setup{}, merged over the defaults once.
local M = {}

M.defaults = {
  -- The ask-lsp binary: a path, or a name looked up in $PATH.
  cmd = { 'ask-lsp' },
  -- Agent servers (see docs/protocol.md); nil means ask-lsp's default
  -- (http://127.0.0.1:4096, or $ASK_LSP_URL).
  servers = nil,
  -- Question policy (docs/policies.md); nil forwards everything to you.
  policy = nil,
  -- 'auto': vim.ui.select for a lone single-select question (your picker:
  -- telescope, fzf-lua, snacks…), the floating form for everything else.
  -- 'float': always the form. 'select': vim.ui.select question by question.
  ui = 'auto',
  -- Start ask-lsp at setup (else on the first :Ask).
  autostart = true,
  -- Floating window size limits.
  float = { max_width = 90, border = 'rounded' },
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  if type(M.options.cmd) == 'string' then
    M.options.cmd = { M.options.cmd }
  end
  vim.validate('ui', M.options.ui, function(v)
    return v == 'auto' or v == 'float' or v == 'select'
  end, "'auto', 'float' or 'select'")
  return M.options
end

return M
