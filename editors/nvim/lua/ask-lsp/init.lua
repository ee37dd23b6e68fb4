-- ask-lsp for Neovim: an AI agent's questions, answered in the editor.
local M = {}

--- Configures the plugin and (unless autostart = false) starts ask-lsp.
---@param opts table? see :help ask-lsp-setup
function M.setup(opts)
  require('ask-lsp.config').set(opts)
  if require('ask-lsp.config').options.autostart then
    M.start()
  end
end

function M.start()
  return require('ask-lsp.client').start()
end

--- For the statusline: "? N" while questions wait, else "".
function M.statusline()
  local pending = require('ask-lsp.client').status.pending or 0
  if pending == 0 then
    return ''
  end
  return ('? %d question%s'):format(pending, pending == 1 and '' or 's')
end

return M
