-- lazy.nvim runs build.lua from the root of a plugin's repository: this
-- one is the Neovim plugin's build step (editors/nvim/build.lua).
dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/editors/nvim/build.lua')
