-- :checkhealth ask-lsp
local M = {}

function M.check()
  local health = vim.health
  local config = require('ask-lsp.config').options
  local client = require('ask-lsp.client')
  health.start('ask-lsp')
  local bin = config.cmd[1]
  if vim.fn.executable(bin) == 1 then
    local version = vim.system({ bin, '--version' }, { text = true }):wait(2000)
    health.ok(('binary: %s (%s)'):format(vim.fn.exepath(bin), vim.trim(version.stdout or '?')))
  else
    health.error(('binary %q not found'):format(bin), {
      'cargo install --path . in the ask-lsp repository, or set cmd in setup{}',
    })
    return
  end
  if not client.get() then
    health.warn('ask-lsp is not running', { 'call require("ask-lsp").setup{} or :Ask start' })
    return
  end
  local status, err = client.command_sync('askLsp.status', {}, 3000)
  if not status then
    health.error('ask-lsp does not answer: ' .. err)
    return
  end
  for _, server in ipairs(status.servers) do
    if server.connected then
      health.ok(('server %s (%s): connected'):format(server.name, server.url))
    elseif server.error and server.error:find('401', 1, true) then
      health.error(('server %s (%s): %s'):format(server.name, server.url, server.error), {
        'set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME) before starting Neovim, or password in servers',
      })
    else
      health.error(('server %s (%s): %s'):format(server.name, server.url, server.error or 'connecting'), {
        'is `opencode serve` running there?',
      })
    end
  end
  health.info(('pending questions: %d'):format(status.pending))
end

return M
