-- Options given to setup{}, merged over the defaults once; and where the
-- ask-lsp binary is.

---An agent server ask-lsp follows (ask-lsp's docs/protocol.md, "Configuration").
---@class ask-lsp.Server
---@field url? string Base URL. Default: $ASK_LSP_URL, else http://127.0.0.1:4096.
---@field name? string Name used in keys and messages. Default: 'default', then 'server2', …
---@field directory? string OpenCode project directory. Default: every directory.
---@field username? string Basic-auth user. Default: $OPENCODE_SERVER_USERNAME, else 'opencode'.
---@field password? string Basic-auth password; prefer $OPENCODE_SERVER_PASSWORD.
---@field backend? 'opencode'|'sandbox-agent' Default: 'opencode'.
---@field serverId? string sandbox-agent: the ACP server id.
---@field token? string sandbox-agent: bearer token.

---@class ask-lsp.FloatConfig
---@field max_width? integer Widest the form may be. Default: 90.
---@field border? string|string[] See 'winborder'. Default: 'rounded'.

---Notifications out of the editor (ask-lsp's docs/protocol.md, "Notifications").
---@class ask-lsp.NotifyConfig
---@field desktop? boolean A desktop notification (notify-send; osascript on macOS; a PowerShell toast on Windows) for a prompt left unanswered. Default: false.
---@field afterMs? integer Unanswered this long counts as not looking. Default: 10000.
---@field intervalMs? integer At most one notification per this many ms; prompts due meanwhile are announced together. Default: 30000.

---When a prompt takes the cursor (ask-lsp.attention; :help ask-lsp-focus).
---@class ask-lsp.FocusConfig
---@field mode? 'idle'|'unfocused'|'now' Default: 'idle'.
---@field idle_ms? integer 'idle': no key pressed for this long, in Normal mode. Default: 1500.

---@class ask-lsp.Config
---The ask-lsp command. nil: the binary the build step put in the plugin's
---bin/, else `ask-lsp` on $PATH.
---@field cmd? string[]|string
---@field servers? ask-lsp.Server[] nil: ask-lsp's default server.
---@field policy? table Question policy (ask-lsp's docs/policies.md); nil forwards everything.
---@field notify? ask-lsp.NotifyConfig nil: no notifications out of the editor.
---'auto': vim.ui.select for a lone single-select question, the form for the
---rest. 'float': always the form. 'select': vim.ui.select question by question.
---@field ui? 'auto'|'float'|'select'
---@field autostart? boolean Start ask-lsp at setup (else on the first :AskLsp). Default: true.
---@field float? ask-lsp.FloatConfig
---@field focus? ask-lsp.FocusConfig
---'split': an edit permission opens its file beside the proposed version
---(a diff split in a new tab) when its diff applies; 'float': the diff in
---the permission float. Default: 'split'.
---@field diff? 'split'|'float'
---The language of the plugin's words (and, sent as initializationOptions.locale,
---of ask-lsp's): 'en' or 'zh-CN' (zh_CN.UTF-8 and the like work too). nil:
---v:lang, else $LC_ALL/$LC_MESSAGES/$LANG, else English.
---@field locale? string
---Codex homes (absolute paths) whose app-server daemons ask-lsp follows
---besides $CODEX_HOME (else ~/.codex); sent as initializationOptions.codexHomes.
---@field codex_homes? string[]

local M = {}

---@type ask-lsp.Config
M.defaults = {
  cmd = nil,
  servers = nil,
  policy = nil,
  notify = nil,
  ui = 'auto',
  autostart = true,
  float = { max_width = 90, border = 'rounded' },
  focus = { mode = 'idle', idle_ms = 1500 },
  diff = 'split',
  locale = nil,
  codex_homes = nil,
}

---@type ask-lsp.Config
M.options = vim.deepcopy(M.defaults)
--- setup{} was called: :AskLsp may start the plugin's client.
M.configured = false

--- Each source of the command, as the catalogue names it.
M.SOURCES = { configured = 'source.configured', plugin = 'source.plugin', PATH = 'source.PATH' }

--- The command that starts ask-lsp and where it came from: the configured
--- `cmd`, else the plugin-local binary, else `ask-lsp` on $PATH.
---@return string[] cmd
---@return 'configured'|'plugin'|'PATH' source
function M.command()
  if M.options.cmd then
    return M.options.cmd --[[@as string[] ]], 'configured'
  end
  local bin = require('ask-lsp.build').binary
  if vim.fn.executable(bin) == 1 then
    return { bin }, 'plugin'
  end
  return { 'ask-lsp' }, 'PATH'
end

---@param opts ask-lsp.Config?
---@return ask-lsp.Config
function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  M.configured = true
  if type(M.options.cmd) == 'string' then
    M.options.cmd = { M.options.cmd }
  end
  vim.validate('ui', M.options.ui, function(v)
    return v == 'auto' or v == 'float' or v == 'select'
  end, "'auto', 'float' or 'select'")
  vim.validate('diff', M.options.diff, function(v)
    return v == 'split' or v == 'float'
  end, "'split' or 'float'")
  vim.validate('focus.mode', M.options.focus.mode, function(v)
    return v == 'idle' or v == 'unfocused' or v == 'now'
  end, "'idle', 'unfocused' or 'now'")
  vim.validate('focus.idle_ms', M.options.focus.idle_ms, function(v)
    return type(v) == 'number' and v >= 0
  end, 'a number of milliseconds')
  vim.validate('locale', M.options.locale, 'string', true)
  vim.validate('codex_homes', M.options.codex_homes, 'table', true)
  require('ask-lsp.i18n').setting = M.options.locale
  return M.options
end

return M
