-- :AskLsp [list|answer|reject|status|start|build|hook claude|codex|qwen|copilot] (:Ask is the deprecated alias)
local client = require('ask-lsp.client')
local t = require('ask-lsp.i18n').t

local M = {}

--- The pending requests, or nil (and the person told why) when there are none.
local function pending_list()
  local list, err = client.command_sync('askLsp.list', {})
  if not list then
    vim.notify('ask-lsp: ' .. err, vim.log.levels.ERROR)
    return nil
  end
  if #list == 0 then
    vim.notify('ask-lsp: ' .. t('commands.nothing_pending'))
    return nil
  end
  return list
end

---@param request ask-lsp.AskParams
local function describe(request)
  local agent = request.origin and request.origin.agent
  return t('commands.describe', {
    title = require('ask-lsp.ui').request_title(request),
    server = request.server,
    session = request.sessionID,
    agent = agent and t('commands.describe_agent', { agent = agent }) or '',
  })
end

--- Picks a pending request (the only one, or via vim.ui.select), then `fn(request)`.
local function choose(fn)
  local list = pending_list()
  if not list then
    return
  end
  if #list == 1 then
    fn(list[1])
  else
    vim.ui.select(list, { prompt = t('commands.pick'), format_item = describe }, function(choice)
      if choice then
        fn(choice)
      end
    end)
  end
end

M.subcommands = {
  list = function()
    local list = pending_list()
    if not list then
      return
    end
    local lines = {}
    for i, request in ipairs(list) do
      table.insert(lines, ('%d. %s'):format(i, describe(request)))
    end
    vim.notify('ask-lsp: ' .. t('commands.list') .. '\n' .. table.concat(lines, '\n'))
  end,
  -- Shows a pending request again (one you closed with q, or one waiting).
  answer = function()
    if require('ask-lsp.attention').focus() then
      return
    end
    choose(function(request)
      client.command('askLsp.show', { request.key }, function() end)
    end)
  end,
  reject = function()
    choose(function(request)
      client.command('askLsp.reject', { request.key }, function(err)
        if err then
          vim.notify('ask-lsp: ' .. err.message, vim.log.levels.ERROR)
        end
      end)
    end)
  end,
  status = function()
    local status, err = client.command_sync('askLsp.status', {})
    if not status then
      vim.notify('ask-lsp: ' .. err, vim.log.levels.ERROR)
      return
    end
    local lines = { t('commands.pending', { count = status.pending }) }
    for _, server in ipairs(status.servers) do
      local state = server.connected and t('commands.connected')
        or t('commands.not_connected', { error = server.error or t('commands.connecting') })
      table.insert(lines, ('%s %s: %s'):format(server.name, server.url, state))
    end
    vim.notify('ask-lsp\n' .. table.concat(lines, '\n'))
  end,
  start = function()
    require('ask-lsp').start()
  end,
  -- The hook settings for Claude Code, Codex, Qwen Code or Copilot CLI, with this binary's path
  -- (the plugin's ask-lsp is not on $PATH): shown and put in the unnamed
  -- register.
  hook = function(args)
    local agent = args.fargs[2] or 'claude'
    local hook = require('ask-lsp.hook')
    local binary = hook.binary()
    if not binary then
      vim.notify('ask-lsp: ' .. t('hook.no_binary'), vim.log.levels.ERROR)
      return
    end
    local snippet, file = hook.snippet(agent, binary)
    if not snippet then
      vim.notify('ask-lsp: ' .. t('hook.unknown_agent', { name = agent }), vim.log.levels.ERROR)
      return
    end
    vim.fn.setreg('"', snippet .. '\n', 'l')
    vim.notify('ask-lsp: ' .. t('hook.snippet', { file = file }) .. '\n' .. snippet)
  end,
  -- Builds the binary again (after updating the repository).
  build = function()
    vim.notify('ask-lsp: ' .. t('commands.building'))
    local build = require('ask-lsp.build')
    build.build(function(err, version)
      if err then
        vim.notify('ask-lsp: ' .. err, vim.log.levels.ERROR)
      else
        vim.notify('ask-lsp: ' .. t('commands.built', { version = version, path = build.binary }))
      end
    end)
  end,
}

--- Subcommands that must not start ask-lsp first.
local OFFLINE = { start = true, build = true, hook = true }

function M.run(args)
  local name = args.fargs[1] or 'answer'
  local fn = M.subcommands[name]
  if not fn then
    vim.notify('ask-lsp: ' .. t('commands.unknown', { name = name }), vim.log.levels.ERROR)
    return
  end
  if not OFFLINE[name] and not client.get() then
    if not require('ask-lsp.config').configured then
      -- Never a client nobody asked for: with vim.lsp.enable('ask_lsp') it
      -- would be a second one.
      vim.notify(t('commands.not_running'), vim.log.levels.WARN)
      return
    end
    require('ask-lsp').start()
  end
  fn(args)
end

function M.complete(arglead, cmdline)
  local names = (cmdline or ''):match('^%S+%s+hook%s') and { 'claude', 'codex', 'qwen', 'copilot' } or vim.tbl_keys(M.subcommands)
  return vim.tbl_filter(function(name)
    return name:find(arglead, 1, true) == 1
  end, names)
end

return M
