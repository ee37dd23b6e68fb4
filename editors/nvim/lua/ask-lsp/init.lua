-- ask-lsp for Neovim: an AI agent's questions, answered in the editor.
local t = require('ask-lsp.i18n').t

local M = {}

--- The oldest Neovim the plugin runs on: it uses 0.11's vim.lsp.Client
--- methods (client:request), vim.validate's new form and lsp/ configs.
M.MIN_NVIM = '0.11'

--- Whether this Neovim is new enough; else the message saying so.
---@return boolean ok
---@return string? message
function M.supported()
  if vim.fn.has('nvim-' .. M.MIN_NVIM) == 1 then
    return true
  end
  local v = vim.version()
  return false, t('nvim.too_old', { min = M.MIN_NVIM, version = ('%d.%d.%d'):format(v.major, v.minor, v.patch) })
end

--- Configures the plugin and (unless autostart = false) starts ask-lsp.
---@param opts ask-lsp.Config? see :help ask-lsp-setup
function M.setup(opts)
  local ok, message = M.supported()
  if not ok then
    vim.notify(message, vim.log.levels.ERROR)
    return
  end
  require('ask-lsp.config').set(opts)
  -- Keys are watched from now on: "idle" is measured from the last one.
  require('ask-lsp.attention')
  if require('ask-lsp.config').options.autostart then
    M.start()
  end
end

function M.start()
  return require('ask-lsp.client').start()
end

--- For the statusline: "? N questions" while questions wait, else "".
function M.statusline()
  local pending = require('ask-lsp.client').status.pending or 0
  if pending == 0 then
    return ''
  end
  return t(pending == 1 and 'statusline.one' or 'statusline.many', { count = pending })
end

return M
