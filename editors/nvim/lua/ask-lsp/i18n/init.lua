-- The plugin's own words in the person's language: message catalogues (en,
-- the source and the fallback; zh-CN) with named placeholders, and which one
-- applies. Agent text (questions, options, commands, titles) never goes
-- through here. Loaded by path, not require, so the build step (dofile'd
-- before the plugin is on 'runtimepath') can use it too.
local M = {}

local dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
M.catalogues = { en = dofile(dir .. '/en.lua'), ['zh-CN'] = dofile(dir .. '/zh-CN.lua') }

--- setup{}'s `locale`, nil when not set.
---@type string?
M.setting = nil

--- A locale tag as the catalogue that serves it: case-insensitive, `_` as
--- `-`, without `.encoding` and `@modifier`. Simplified Chinese tags give
--- zh-CN; anything else (Traditional Chinese included: no catalogue yet) en.
---@param tag string
---@return 'en'|'zh-CN'
function M.normalize(tag)
  local t = tag:lower():gsub('_', '-'):gsub('[.@].*$', '')
  if t == 'zh' or t == 'zh-cn' or t == 'zh-sg' or t == 'zh-hans' or t:find('^zh%-hans%-') then
    return 'zh-CN'
  end
  return 'en'
end

--- "C" and "POSIX" are what v:lang says when no language was chosen (or
--- the system lacks the chosen locale): no choice, the environment decides.
local function chosen(lang)
  if not lang or lang == '' then
    return false
  end
  local t = lang:lower():gsub('[.@].*$', '')
  return t ~= 'c' and t ~= 'posix'
end

--- Which catalogue: the `locale` setting > the editor's language (v:lang)
--- > $LC_ALL > $LC_MESSAGES > $LANG (the first non-empty) > en.
---@param setting string? setup{}'s locale
---@param lang string? v:lang
---@param env table<string, string?> LC_ALL, LC_MESSAGES, LANG
---@return 'en'|'zh-CN'
function M.resolve(setting, lang, env)
  if setting and setting ~= '' then
    return M.normalize(setting)
  end
  if chosen(lang) then
    return M.normalize(lang --[[@as string]])
  end
  for _, name in ipairs({ 'LC_ALL', 'LC_MESSAGES', 'LANG' }) do
    local value = env[name]
    if value and value ~= '' then
      return M.normalize(value)
    end
  end
  return 'en'
end

--- The locale in use now (v:lang may change with :language).
function M.locale()
  local env = { LC_ALL = os.getenv('LC_ALL'), LC_MESSAGES = os.getenv('LC_MESSAGES'), LANG = os.getenv('LANG') }
  return M.resolve(M.setting, vim.v.lang, env)
end

--- The message `key` in the person's language (English when the catalogue
--- lacks it), its `{name}` placeholders filled from `vars`.
---@param key string
---@param vars? table<string, any>
---@return string
function M.t(key, vars)
  local text = M.catalogues[M.locale()][key] or M.catalogues.en[key] or key
  if vars then
    text = text:gsub('{([%w_]+)}', function(name)
      if vars[name] ~= nil then
        return tostring(vars[name])
      end
    end)
  end
  return text
end

--- The placeholder names of a message, sorted (for the parity test).
---@param text string
---@return string[]
function M.placeholders(text)
  local names = {}
  for name in text:gmatch('{([%w_]+)}') do
    names[name] = true
  end
  local list = vim.tbl_keys(names)
  table.sort(list)
  return list
end

return M
