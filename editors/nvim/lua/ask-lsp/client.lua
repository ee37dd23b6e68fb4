-- The ask-lsp language server: starting it, and the askQuestions extension
-- (version 2, ask-lsp's docs/protocol.md).
local config = require('ask-lsp.config')
local t = require('ask-lsp.i18n').t

---@class ask-lsp.Option
---@field label string
---@field description string

---@class ask-lsp.Question
---@field question string
---@field header string
---@field options ask-lsp.Option[]
---@field multiple boolean
---@field custom boolean

---@class ask-lsp.Permission
---@field action string The tool: bash, edit, an ACP tool kind.
---@field title string
---@field patterns string[]
---@field command? string The whole command line.
---@field diff? string A unified diff, for edits.
---@field choices { id: string, label: string, effect: 'allowOnce'|'allowAlways'|'rejectOnce'|'rejectAlways' }[]

---@class ask-lsp.FormField
---@field id string
---@field title string
---@field description string
---@field required boolean
---@field type 'text'|'number'|'integer'|'boolean'|'choice'|'multi'
---@field format? 'email'|'uri'|'date'|'date-time'
---@field pattern? string
---@field minLength? integer
---@field maxLength? integer
---@field minimum? number
---@field maximum? number
---@field options? { value: string, label: string, description?: string }[]
---@field minItems? integer
---@field maxItems? integer
---@field default? string|number|boolean|string[]

---@class ask-lsp.Form
---@field message string
---@field url? { url: string, domain: string } Url mode: a link the person may open.
---@field fields ask-lsp.FormField[]

---@class ask-lsp.AskParams askQuestions/ask
---@field key string
---@field server string
---@field sessionID string
---@field kind? 'questions'|'permission'|'form' Version 2.
---@field title? string Version 2: the display title ask-lsp computed.
---@field source? { backend: string, url: string, directory?: string } Version 2.
---@field origin? { toolCallID?: string, agent?: string } Version 2.
---@field questions? ask-lsp.Question[] kind 'questions'
---@field permission? ask-lsp.Permission kind 'permission'
---@field form? ask-lsp.Form kind 'form'
---@field requestID string
---@field timeoutMs? integer
---@field pending integer

---@class ask-lsp.ResolvedParams askQuestions/resolved
---@field key string
---@field state string
---@field reason string
---@field message string
---@field pending integer
---@field here? boolean Version 2: answered or rejected in this editor.

local M = {}

---@type integer?
M.client_id = nil
--- What ask-lsp last said: pending count, servers, counters.
M.status = { pending = 0, servers = {} }
--- The question request on screen: { key, params, close = fun(), respond = fun(result, err) }.
M.current = nil

--- The plugin's client, else one started by `vim.lsp.enable('ask_lsp')`:
--- :AskLsp talks to that one rather than start a second ask-lsp (every
--- prompt would show twice).
local function client()
  local own = M.client_id and vim.lsp.get_client_by_id(M.client_id) or nil
  return own or vim.lsp.get_clients({ name = 'ask_lsp' })[1]
end
M.get = client

local function respond_later(params)
  local co, is_main = coroutine.running()
  assert(co and not is_main, 'askQuestions/ask handler must run in a coroutine')
  local done = false
  local prompt = { key = params.key, params = params }
  function prompt.respond(result, err)
    if done then
      return
    end
    done = true
    if M.current == prompt then
      M.current = nil
    end
    vim.schedule(function()
      coroutine.resume(co, result, err)
    end)
  end
  return prompt
end

local handlers = {}

--- Resolved through this editor? Version 2 says so in `here`; version 1
--- servers only give the reason.
---@param params ask-lsp.ResolvedParams
local function resolved_here(params)
  if params.here ~= nil then
    return params.here
  end
  return params.reason == 'answeredHere' or params.reason == 'rejectedHere'
end

-- A question request: shown now; the response goes back when the person
-- decides (or is withdrawn by askQuestions/resolved).
---@param params ask-lsp.AskParams
handlers['askQuestions/ask'] = function(_, params, ctx)
  local prompt = respond_later(params)
  M.current = prompt
  M.status.pending = params.pending or M.status.pending
  vim.schedule(function()
    vim.cmd.redrawstatus({ bang = true })
    vim.api.nvim_exec_autocmds('User', {
      pattern = 'AskLspPrompt',
      data = {
        key = params.key,
        title = require('ask-lsp.ui').request_title(params),
        server = params.server,
        pending = params.pending,
        client_id = ctx.client_id,
      },
    })
    require('ask-lsp.attention').present(prompt)
  end)
  return coroutine.yield()
end

---@param params ask-lsp.ResolvedParams
handlers['askQuestions/resolved'] = function(_, params)
  M.status.pending = params.pending or M.status.pending
  local prompt = M.current
  if prompt and prompt.key == params.key then
    prompt.respond(nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.RequestCancelled))
    if prompt.close then
      prompt.close()
    end
    if not resolved_here(params) then
      vim.notify('ask-lsp: ' .. params.message, vim.log.levels.INFO)
    end
  end
  vim.cmd.redrawstatus({ bang = true })
  vim.api.nvim_exec_autocmds('User', { pattern = 'AskLspResolved', data = params })
end

handlers['askQuestions/status'] = function(_, params)
  M.status = params
  vim.cmd.redrawstatus({ bang = true })
end

function M.start()
  local existing = client()
  if existing and not existing:is_stopped() then
    return existing.id
  end
  local opts = config.options
  local cmd, source = config.command()
  if vim.fn.executable(cmd[1]) == 0 then
    vim.notify('ask-lsp: ' .. t('client.not_found', { bin = ('%q'):format(cmd[1]), source = t(config.SOURCES[source]) }), vim.log.levels.ERROR)
    return nil
  end
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  -- Permissions and forms come through the extension too (else ask-lsp
  -- would send them as plain showMessageRequest prompts).
  capabilities.experimental = { askQuestions = { version = 2, kinds = { 'permission', 'form', 'secret' } } }
  M.client_id = vim.lsp.start({
    name = 'ask-lsp',
    cmd = cmd,
    root_dir = vim.fn.getcwd(),
    capabilities = capabilities,
    -- An object even when empty: `{}` alone would be sent as `[]`. An
    -- explicit locale goes to ask-lsp too, so one setting changes both;
    -- without one ask-lsp follows the environment (Neovim's initialize
    -- sends no `locale`).
    init_options = vim.tbl_extend('force', vim.empty_dict(), {
      servers = opts.servers,
      policy = opts.policy,
      notify = opts.notify,
      locale = opts.locale,
      codexHomes = opts.codex_homes,
    }),
    handlers = handlers,
  }, { attach = false })
  return M.client_id
end

--- Runs an askLsp.* command; `callback(err, result)`.
function M.command(name, arguments, callback)
  local c = client()
  if not c then
    callback({ message = t('client.not_running_start') }, nil)
    return
  end
  c:request('workspace/executeCommand', { command = name, arguments = arguments }, function(err, result)
    callback(err, result)
  end)
end

--- Synchronous variant for health checks and commands.
function M.command_sync(name, arguments, timeout_ms)
  local c = client()
  if not c then
    return nil, t('client.not_running')
  end
  local response = c:request_sync('workspace/executeCommand', { command = name, arguments = arguments }, timeout_ms or 2000)
  if not response then
    return nil, t('client.no_answer')
  end
  if response.err then
    return nil, response.err.message
  end
  return response.result
end

return M
