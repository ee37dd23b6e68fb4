-- The ask-lsp language server: starting it, and the askQuestions extension.
local config = require('ask-lsp.config')

local M = {}

---@type integer?
M.client_id = nil
--- What ask-lsp last said: pending count, servers, counters.
M.status = { pending = 0, servers = {} }
--- The question request on screen: { key, params, close = fun(), respond = fun(result, err) }.
M.current = nil

local function client()
  return M.client_id and vim.lsp.get_client_by_id(M.client_id) or nil
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

-- A question request: shown now; the response goes back when the person
-- decides (or is withdrawn by askQuestions/resolved).
handlers['askQuestions/ask'] = function(_, params)
  local prompt = respond_later(params)
  M.current = prompt
  vim.schedule(function()
    require('ask-lsp.ui').show(prompt)
  end)
  return coroutine.yield()
end

handlers['askQuestions/resolved'] = function(_, params)
  M.status.pending = params.pending or M.status.pending
  local prompt = M.current
  if prompt and prompt.key == params.key then
    prompt.respond(nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.RequestCancelled))
    if prompt.close then
      prompt.close()
    end
    if params.reason ~= 'answeredHere' and params.reason ~= 'rejectedHere' then
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
    return M.client_id
  end
  local opts = config.options
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.experimental = { askQuestions = { version = 1 } }
  M.client_id = vim.lsp.start({
    name = 'ask-lsp',
    cmd = opts.cmd,
    root_dir = vim.fn.getcwd(),
    capabilities = capabilities,
    init_options = { servers = opts.servers, policy = opts.policy },
    handlers = handlers,
  }, { attach = false })
  return M.client_id
end

--- Runs an askLsp.* command; `callback(err, result)`.
function M.command(name, arguments, callback)
  local c = client()
  if not c then
    callback({ message = 'ask-lsp is not running (:Ask start)' }, nil)
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
    return nil, 'ask-lsp is not running'
  end
  local response = c:request_sync('workspace/executeCommand', { command = name, arguments = arguments }, timeout_ms or 2000)
  if not response then
    return nil, 'no answer from ask-lsp'
  end
  if response.err then
    return nil, response.err.message
  end
  return response.result
end

return M
