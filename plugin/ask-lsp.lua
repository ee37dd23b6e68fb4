-- The repository as a Neovim plugin: lazy.nvim, vim.pack and paq put a
-- repository's root on 'runtimepath', and the plugin is editors/nvim. This
-- adds it (its lua/, lsp/, doc/ and plugin/), so the repository URL alone
-- installs it (editors/nvim/README.md, "Install").
local dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h') .. '/editors/nvim'
if not vim.tbl_contains(vim.opt.runtimepath:get(), dir) then
  vim.opt.runtimepath:append(dir)
end
vim.cmd.source(dir .. '/plugin/ask-lsp.lua')
