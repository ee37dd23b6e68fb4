-- :checkhealth ask-lsp
local M = {}

function M.check()
  local health = vim.health
  local client = require('ask-lsp.client')
  health.start('ask-lsp')
  local supported, why = require('ask-lsp').supported()
  if supported then
    local v = vim.version()
    health.ok(('Neovim %d.%d.%d (ask-lsp needs %s or newer)'):format(v.major, v.minor, v.patch, require('ask-lsp').MIN_NVIM))
  else
    health.error(why --[[@as string]])
    return
  end
  local cmd, source = require('ask-lsp.config').command()
  local bin = cmd[1]
  if vim.fn.executable(bin) == 1 then
    local version = vim.system({ bin, '--version' }, { text = true }):wait(2000)
    health.ok(('binary: %s (%s; from %s)'):format(vim.fn.exepath(bin), vim.trim(version.stdout or '?'), source))
  else
    health.error(('binary %q not found (from %s)'):format(bin, source), {
      ':AskLsp build (or :Lazy build ask-lsp) builds it into the plugin',
      'or `cargo install --locked --path .` in the ask-lsp repository puts it on $PATH',
      'or set cmd in setup{}',
    })
    return
  end
  if not client.get() then
    health.warn('ask-lsp is not running', {
      'with the plugin: call require("ask-lsp").setup{} or :AskLsp start',
      "without it: vim.lsp.enable('ask_lsp') starts it with the first file you open",
    })
    return
  end
  local status, err = client.command_sync('askLsp.status', {}, 3000)
  if not status then
    health.error('ask-lsp does not answer: ' .. err)
    return
  end
  for _, server in ipairs(status.servers) do
    if server.discovered ~= nil and server.discovered ~= vim.NIL then
      health.info(('server %s (%s): no server configured; found running: %s'):format(server.name, server.url, server.discovered))
    elseif server.defaulted then
      -- The documented default is no problem; say how to choose another.
      health.info(('server %s: none configured, so ask-lsp follows %s (set servers in setup{} or $ASK_LSP_URL to choose another)'):format(server.name, server.url))
    end
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
  health.info(('pending prompts (questions, permissions, forms): %d'):format(status.pending))
end

return M
