-- :checkhealth ask-lsp
local t = require('ask-lsp.i18n').t

local M = {}

function M.check()
  local health = vim.health
  local client = require('ask-lsp.client')
  health.start('ask-lsp')
  local supported, why = require('ask-lsp').supported()
  if supported then
    local v = vim.version()
    local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
    health.ok(t('health.nvim', { version = version, min = require('ask-lsp').MIN_NVIM }))
  else
    health.error(why --[[@as string]])
    return
  end
  local config = require('ask-lsp.config')
  local cmd, source = config.command()
  source = t(config.SOURCES[source])
  local bin = cmd[1]
  if vim.fn.executable(bin) == 1 then
    local version = vim.system({ bin, '--version' }, { text = true }):wait(2000)
    health.ok(t('health.binary', { path = vim.fn.exepath(bin), version = vim.trim(version.stdout or '?'), source = source }))
  else
    health.error(t('health.binary_missing', { bin = ('%q'):format(bin), source = source }), {
      t('health.advice_build'),
      t('health.advice_install'),
      t('health.advice_cmd'),
    })
    return
  end
  -- Installed with the plugin, ask-lsp is not on $PATH: the hook needs its path.
  health.info(t('health.hook', { command = require('ask-lsp.hook').command('claude', vim.fn.exepath(bin)) }))
  if not client.get() then
    health.warn(t('client.not_running'), { t('health.advice_setup'), t('health.advice_enable') })
    return
  end
  local status, err = client.command_sync('askLsp.status', {}, 3000)
  if not status then
    health.error(t('health.no_answer', { error = err }))
    return
  end
  for _, server in ipairs(status.servers) do
    if server.discovered ~= nil and server.discovered ~= vim.NIL then
      health.info(t('health.discovered', { name = server.name, url = server.url, found = server.discovered }))
    elseif server.defaulted then
      -- The documented default is no problem; say how to choose another.
      health.info(t('health.defaulted', { name = server.name, url = server.url }))
    end
    if server.connected then
      health.ok(t('health.connected', { name = server.name, url = server.url }))
    elseif server.idle then
      -- A state, not a fault: no Codex daemon runs (nothing to fix).
      health.info(t('health.server_error', { name = server.name, url = server.url, error = server.error or '' }))
    elseif server.error and server.error:find('401', 1, true) then
      health.error(t('health.server_error', { name = server.name, url = server.url, error = server.error }), {
        t('health.advice_password'),
      })
    else
      local reason = server.error or t('commands.connecting')
      health.error(t('health.server_error', { name = server.name, url = server.url, error = reason }), {
        t('health.advice_serve'),
      })
    end
  end
  health.info(t('health.pending', { count = status.pending }))
end

return M
