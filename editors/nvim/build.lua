-- lazy.nvim runs build.lua from the plugin's root when a plugin is installed
-- or updated: get the ask-lsp binary (lua/ask-lsp/build.lua).
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
dofile(here .. '/lua/ask-lsp/build.lua').run()
