-- Child Neovim for spec.lua: runs the plugin's build step (as :AskLsp build
-- and lazy.nvim's build.lua do) in a clone checked out at a release tag;
-- prints what it did as JSON on its last line.
local clone = assert(arg[1], 'clone of the repository')
local build = dofile(clone .. '/editors/nvim/lua/ask-lsp/build.lua')
local said = {}
build.log = function(message)
  table.insert(said, message)
end
local done, result = false, nil
build.build(function(err, version)
  done, result = true, { err = err, version = version }
end)
vim.wait(60000, function()
  return done
end, 20)
result = result or { err = 'timed out' }
result.said = said
io.stdout:write(vim.json.encode(result) .. '\n')
