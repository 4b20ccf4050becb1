package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/internal/version"
)

// Config holds a server configuration. Create it with Default or FromArgs.
type Config struct {
	mu       sync.Mutex // serialises Set, Rewrite and hook registration
	vals     []atomic.Value
	file     string // absolute path of the config file, "" without one
	renames  [][2]string
	users    [][]string
	spaces   [][]string
	onChange [][]func()
	onApply  [][]func() error

	persistent bool // the configuration asks for files on disk (Persistent)
}

var (
	errWrongArgs  = errors.New("wrong number of arguments")
	errNotRegular = errors.New("Not a regular file")
)

// defaults holds each directive's parsed default; values are never mutated
// in place, so all Configs can share them.
var defaults = func() []any {
	d := make([]any, len(specs))
	for i := range specs {
		s := &specs[i]
		if s.sp == spDir {
			d[i] = "" // replaced by the working directory in Default
			continue
		}
		args := []string{s.def}
		if s.flags&fMulti != 0 {
			args = splitSpaces(s.def)
		}
		v, err := parseValue(s, args, nil)
		if err != nil {
			panic("config: bad default for " + s.name + ": " + err.Error())
		}
		d[i] = v
	}
	return d
}()

// Default returns the Redis 7.0 defaults (what a redis-server started
// without a config file and without options reports), with dir set to the
// process's working directory.
func Default() *Config {
	c := &Config{
		vals:     make([]atomic.Value, len(specs)),
		onChange: make([][]func(), len(specs)),
		onApply:  make([][]func() error, len(specs)),
	}
	for i := range specs {
		c.vals[i].Store(defaults[i])
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "/"
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	c.vals[ixDir].Store(wd)
	return c
}

// parseValue validates the words of one directive and returns its typed
// value. cur is the directive's current value (nil while computing defaults).
func parseValue(s *spec, args []string, cur any) (any, error) {
	if s.flags&fMulti == 0 && len(args) != 1 {
		return nil, errWrongArgs
	}
	var v any
	switch s.kind {
	case kBool:
		switch strings.ToLower(args[0]) {
		case "yes":
			v = true
		case "no":
			v = false
		default:
			return nil, errors.New("argument must be 'yes' or 'no'")
		}
	case kInt:
		n, ok := parseInt(args[0])
		if !ok {
			return nil, errors.New("argument couldn't be parsed into an integer")
		}
		if err := s.bounds(n); err != nil {
			return nil, err
		}
		v = n
	case kOctal:
		n, err := strconv.ParseInt(args[0], 8, 64)
		if err != nil {
			return nil, errors.New("argument couldn't be parsed as an octal number")
		}
		if n < s.min || n > s.max {
			return nil, fmt.Errorf("argument must be between %o and %o inclusive", s.min, s.max)
		}
		v = n
	case kMem:
		u, ok := strnum.ParseMemory(args[0])
		if !ok {
			return nil, errors.New("argument must be a memory value")
		}
		if u > llMax {
			return nil, s.boundsErr()
		}
		if err := s.bounds(int64(u)); err != nil {
			return nil, err
		}
		v = int64(u)
	case kMemU:
		u, ok := strnum.ParseMemory(args[0])
		if !ok {
			return nil, errors.New("argument must be a memory value")
		}
		v = u
	case kMemPct:
		a := args[0]
		if strings.HasSuffix(a, "%") {
			p, ok := parseInt(a[:len(a)-1])
			if !ok || p < 0 {
				return nil, errors.New("argument must be a memory or percent value")
			}
			if p > 100 {
				return nil, errors.New("percentage argument must be less or equal to 100")
			}
			v = -p // negative means a percentage of maxmemory
			break
		}
		u, ok := strnum.ParseMemory(a)
		if !ok {
			return nil, errors.New("argument must be a memory or percent value")
		}
		if u > llMax {
			return nil, fmt.Errorf("argument must be between 0 and %d inclusive", int64(llMax))
		}
		v = int64(u)
	case kEnum:
		e, ok := s.enumValue(args[0])
		if !ok {
			return nil, s.enumErr()
		}
		v = e
	case kFlags:
		if len(args) == 0 {
			return nil, s.enumErr()
		}
		var f int64
		for _, a := range args {
			e, ok := s.enumValue(a)
			if !ok {
				return nil, s.enumErr()
			}
			f |= e
		}
		v = f
	case kString:
		v = args[0]
	case kSpecial:
		if cur == nil && s.sp == spObuf {
			cur = obufLimits{}
		}
		var err error
		if v, err = s.sp.parse(args, cur); err != nil {
			return nil, err
		}
	}
	if s.norm != nil {
		v = s.norm(v.(int64))
	}
	if s.check != nil {
		if err := s.check(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (s *spec) bounds(n int64) error {
	if n < s.min || n > s.max {
		return s.boundsErr()
	}
	return nil
}

func (s *spec) boundsErr() error {
	return fmt.Errorf("argument must be between %d and %d inclusive", s.min, s.max)
}

func (s *spec) enumValue(a string) (int64, bool) {
	for _, e := range s.enum {
		if strings.EqualFold(e.name, a) {
			return e.val, true
		}
	}
	return 0, false
}

func (s *spec) enumErr() error {
	var names []string
	for _, e := range s.enum {
		if !e.unlisted {
			names = append(names, e.name)
		}
	}
	return errors.New("argument(s) must be one of the following: " + strings.Join(names, ", "))
}

func (s *spec) enumName(v int64) string {
	for _, e := range s.enum {
		if e.val == v {
			return e.name
		}
	}
	return ""
}

func (s *spec) flagNames(v int64) string {
	if v == 0 {
		return s.enum[0].name
	}
	var names []string
	for _, e := range s.enum {
		if e.val != 0 && v&e.val == e.val {
			names = append(names, e.name)
		}
	}
	return strings.Join(names, " ")
}

// format renders a value exactly as CONFIG GET does.
func (s *spec) format(v any) string {
	switch s.kind {
	case kBool:
		if v.(bool) {
			return "yes"
		}
		return "no"
	case kInt, kMem:
		return strconv.FormatInt(v.(int64), 10)
	case kOctal:
		return strconv.FormatInt(v.(int64), 8)
	case kMemU:
		return strconv.FormatUint(v.(uint64), 10)
	case kMemPct:
		if n := v.(int64); n < 0 {
			return strconv.FormatInt(-n, 10) + "%"
		}
		return strconv.FormatInt(v.(int64), 10)
	case kEnum:
		return s.enumName(v.(int64))
	case kFlags:
		return s.flagNames(v.(int64))
	case kString:
		return v.(string)
	default:
		return s.sp.format(v)
	}
}

// rewriteLines renders a value as config-file lines (without the directive
// name) for CONFIG REWRITE.
func (s *spec) rewriteLines(v, def any) []rwLine {
	if s.kind == kSpecial {
		lines := s.sp.rewrite(v, def)
		if s.flags&fAlwaysRewrite != 0 {
			for i := range lines {
				lines[i].force = true
			}
		}
		return lines
	}
	var text string
	switch s.kind {
	case kMem:
		text = humanMemory(uint64(v.(int64)))
	case kMemU:
		text = humanMemory(v.(uint64))
	case kMemPct:
		if n := v.(int64); n < 0 {
			text = strconv.FormatInt(-n, 10) + "%"
		} else {
			text = humanMemory(uint64(n))
		}
	case kString:
		text = repr(v.(string))
	default:
		text = s.format(v)
	}
	return []rwLine{{text, s.flags&fAlwaysRewrite != 0 || v != def}}
}

// ParseError is a configuration error located in a file or on the command
// line. Its Error text is the banner redis-server prints before exiting.
type ParseError struct {
	File   string // the file holding the line; the main config file (or "") for command-line options
	Line   int    // 1-based line number
	Text   string // the offending line, trimmed
	Reason string // e.g. "Bad directive or wrong number of arguments"
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("*** FATAL CONFIG FILE ERROR (Redis %s) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s",
		version.Redis, e.Line, e.Text, e.Reason)
}

// loader applies configuration text to a fresh set of values.
type loader struct {
	vals    []any
	seen    []bool   // directive already set during this load (save merging)
	stack   []string // files being read, to refuse include loops
	renames [][2]string
	users   [][]string
	spaces  [][]string
}

func newLoader(c *Config) *loader {
	l := &loader{vals: make([]any, len(specs)), seen: make([]bool, len(specs))}
	for i := range specs {
		l.vals[i] = c.vals[i].Load()
	}
	return l
}

func (l *loader) loadText(text, file string) error {
	for n, raw := range strings.Split(text, "\n") {
		line, args, err := lineArgs(raw)
		if err == nil && len(args) == 0 {
			continue // blank or comment
		}
		if err == nil {
			err = l.directive(strings.ToLower(args[0]), args[1:])
		}
		if err != nil {
			var pe *ParseError
			var oe *openError
			if errors.As(err, &pe) || errors.As(err, &oe) {
				return err // from an included file, already located
			}
			return &ParseError{File: file, Line: n + 1, Text: line, Reason: err.Error()}
		}
	}
	return nil
}

// lineArgs trims one config line and splits it into words; no words and no
// error means a blank or comment line.
func lineArgs(raw string) (line string, args []string, err error) {
	if nul := strings.IndexByte(raw, 0); nul >= 0 {
		raw = raw[:nul] // Redis's C string handling stops there
	}
	line = strings.Trim(raw, " \t\r\n")
	if line == "" || line[0] == '#' {
		return line, nil, nil
	}
	args, err = splitArgs(line)
	return line, args, err
}

var errBadDirective = errors.New("Bad directive or wrong number of arguments")

func (l *loader) directive(name string, args []string) error {
	switch name {
	case "include":
		if len(args) != 1 {
			return errBadDirective
		}
		return l.include(args[0])
	case "rename-command":
		if len(args) != 2 {
			return errBadDirective
		}
		l.renames = append(l.renames, [2]string{args[0], args[1]})
		return nil
	case "user":
		if len(args) < 1 {
			return errBadDirective
		}
		l.users = append(l.users, append([]string{}, args...))
		return nil
	case "namespace":
		if len(args) < 3 {
			return errBadDirective
		}
		l.spaces = append(l.spaces, append([]string{}, args...))
		return nil
	case "loadmodule":
		return errors.New("loadmodule is not supported: this server cannot load Redis modules")
	case "sentinel":
		return errors.New("sentinel directive while not in sentinel mode")
	}
	if deprecated[name] {
		return nil
	}
	s := lookup(name)
	if s == nil {
		return errBadDirective
	}
	// An explicit empty argument (save "") resets a merging directive; a
	// bare "save" adds nothing.
	reset := len(args) == 1 && args[0] == ""
	if s.flags&fMulti != 0 {
		// Redis joins the words and splits them again on spaces, so
		// `bind "a b"` means `bind a b` and `save ""` means no save points.
		args = splitSpaces(strings.Join(args, " "))
	}
	v, err := parseValue(s, args, l.vals[s.idx])
	if err != nil {
		return err
	}
	if s.kind == kSpecial && s.sp.merge != nil && l.seen[s.idx] && !reset {
		v = s.sp.merge(l.vals[s.idx], v)
	}
	l.vals[s.idx] = v
	l.seen[s.idx] = true
	return nil
}

// openError is Redis's message for a config file it cannot read.
type openError struct {
	path string
	err  error
}

func (e *openError) Error() string {
	return fmt.Sprintf("Fatal error, can't open config file '%s': %s", e.path, errnoText(e.err))
}

func (e *openError) Unwrap() error { return e.err }

func (l *loader) include(path string) error {
	p := path
	if !filepath.IsAbs(p) {
		// Redis has already chdir'ed to any earlier "dir"; resolve the same way.
		p = filepath.Join(l.vals[ixDir].(string), p)
	}
	files := []string{p}
	if strings.ContainsAny(p, "*?[") {
		m, err := filepath.Glob(p)
		if err != nil {
			return &openError{path, err}
		}
		files = m // sorted; no match is not an error
	}
	for _, f := range files {
		if err := l.loadFile(f, path); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) loadFile(path, shown string) error {
	key := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		key = real
	}
	for _, s := range l.stack {
		if s == key {
			return fmt.Errorf("include loop detected: '%s' includes itself", shown)
		}
	}
	// Only regular files: an include of /dev/zero or a FIFO must not hang.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return &openError{shown, errNotRegular}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return &openError{shown, err}
	}
	l.stack = append(l.stack, key)
	defer func() { l.stack = l.stack[:len(l.stack)-1] }()
	return l.loadText(string(data), path)
}

func (l *loader) commit(c *Config) {
	for i := range specs {
		c.vals[i].Store(l.vals[i])
	}
	c.renames = l.renames
	c.users = l.users
	c.spaces = l.spaces
	c.persistent = l.namesPersistence()
}

// namesPersistence reports whether the text loaded says where to keep the
// data set on disk or turns writing it on; save "" and appendonly no do
// neither.
func (l *loader) namesPersistence() bool {
	for _, i := range []int{ixDir, ixDBFilename, ixAppendFilename, ixAppendDirname} {
		if l.seen[i] {
			return true
		}
	}
	return l.seen[ixSave] && len(l.vals[ixSave].([][2]int64)) > 0 ||
		l.seen[ixAppendOnly] && l.vals[ixAppendOnly].(bool)
}

// Parse returns the defaults overridden by configuration text in redis.conf
// syntax. Includes are resolved relative to the working directory (or an
// earlier "dir"). It never panics, whatever the input.
func Parse(text string) (*Config, error) {
	c := Default()
	l := newLoader(c)
	if err := l.loadText(text, ""); err != nil {
		return nil, err
	}
	l.commit(c)
	return c, nil
}

// FromArgs builds a configuration from redis-server's arguments (without the
// program name): an optional config file path first ("-" instead reads the
// configuration from stdin, as does a final "-"), then "--name value..."
// options. Like redis-server, the options are turned into config lines
// appended after the file, so errors report line numbers in that text.
func FromArgs(args []string) (*Config, error) {
	return fromArgs(args, os.Stdin)
}

func fromArgs(args []string, stdin io.Reader) (*Config, error) {
	c := Default()
	file, j := "", 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, j = args[0], 1
	}
	fromStdin := false
	var opts strings.Builder
	// handled is false right after an option name: the next argument is its
	// value even if it starts with "--" (so --requirepass --x works).
	handled := true
	for k := j; k < len(args); k++ {
		a := args[k]
		switch {
		case a == "-" && (k == 0 || k == len(args)-1):
			fromStdin = true
		case handled && strings.HasPrefix(a, "--"):
			if opts.Len() > 0 {
				opts.WriteByte('\n')
			}
			opts.WriteString(a[2:])
			opts.WriteByte(' ')
			words, err := splitArgs(a)
			if err == nil && len(words) == 1 {
				handled = false
				// A bare --save means `save ""`.
				if strings.EqualFold(a, "--save") && (k == len(args)-1 || strings.HasPrefix(args[k+1], "--")) {
					opts.WriteString(`""`)
					handled = true
				}
			} else {
				handled = true // "--port 6380" given as one argument
			}
		default:
			opts.WriteString(repr(a))
			opts.WriteByte(' ')
			handled = true
		}
	}

	l := newLoader(c)
	var text strings.Builder
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return nil, &openError{file, err}
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, &openError{file, err}
		}
		text.Write(data)
		c.file = abs
		key := abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			key = real
		}
		l.stack = append(l.stack, key)
	}
	if fromStdin {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("Fatal error, can't read config from stdin: %v", err)
		}
		text.Write(data)
	}
	text.WriteByte('\n')
	text.WriteString(opts.String())
	if err := l.loadText(text.String(), c.file); err != nil {
		return nil, err
	}
	l.commit(c)
	c.persistent = c.persistent || file != "" || fromStdin
	return c, nil
}

// Persistent reports whether the configuration asks for the data set to be
// kept on disk: it was read from a config file (or stdin), or it says where
// (dir, dbfilename, appendfilename, appenddirname) or turns writing on (save
// with a save point, appendonly yes). Only then does a server use Redis's persistence defaults (load
// dbfilename from dir at start, save points 3600 1 300 100 60 10000); see
// server.New.
func (c *Config) Persistent() bool { return c.persistent }

// ConfigFile is the absolute path of the config file the server started
// from, or "".
func (c *Config) ConfigFile() string { return c.file }

// RenamedCommands lists the rename-command directives in file order: the
// original name and the new one ("" disables the command). The package only
// records them; the command table applies them.
func (c *Config) RenamedCommands() [][2]string { return c.renames }

// Users lists the arguments of each "user" directive (ACL rules), in order.
func (c *Config) Users() [][]string { return c.users }

// Namespaces lists the arguments of each "namespace" directive (Keyhive's
// key schema: NAMESPACE DEFINE's arguments), in order. The package only
// records them; the server parses and applies them.
func (c *Config) Namespaces() [][]string { return c.spaces }

// Get implements CONFIG GET with one pattern: a flat list of name/value
// pairs for every directive or alias whose name matches the glob pattern
// (case-insensitively). A pattern without glob characters is looked up
// directly and echoed back as given, as Redis does.
func (c *Config) Get(pattern string) []string {
	return c.GetMany([]string{pattern})
}

// GetMany implements CONFIG GET with several patterns; a directive matched
// by more than one pattern is reported once.
func (c *Config) GetMany(patterns []string) []string {
	var out []string
	seen := make(map[string]bool)
	for _, p := range patterns {
		if !strings.ContainsAny(p, "*?[") {
			s := lookup(p)
			key := strings.ToLower(p)
			if s == nil || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, p, s.format(c.vals[s.idx].Load()))
			continue
		}
		for i := range specs {
			s := &specs[i]
			if s.flags&fHidden != 0 {
				continue
			}
			for _, n := range [2]string{s.name, s.alias} {
				if n == "" || seen[n] || !glob.MatchString(p, n, true) {
					continue
				}
				seen[n] = true
				out = append(out, n, s.format(c.vals[i].Load()))
			}
		}
	}
	return out
}

// Value returns a directive's value formatted as CONFIG GET shows it.
func (c *Config) Value(name string) (string, bool) {
	s := lookup(name)
	if s == nil {
		return "", false
	}
	return s.format(c.vals[s.idx].Load()), true
}

// Set implements CONFIG SET name value [name value ...] for a client that
// is not local: protected directives need enable-protected-configs yes.
// Either every directive is changed or none is; the returned error text is
// the Redis reply (starting with "ERR").
func (c *Config) Set(args []string) error { return c.set(args, false) }

// SetLocal is Set for a client on a loopback or unix socket connection,
// for which enable-protected-configs "local" also allows protected
// directives (dir, dbfilename).
func (c *Config) SetLocal(args []string) error { return c.set(args, true) }

func setFailed(name, reason string) error {
	return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, reason)
}

func (c *Config) set(args []string, local bool) error {
	if len(args) < 2 { // below the command's arity
		return errors.New("ERR wrong number of arguments for 'config|set' command")
	}
	if len(args)%2 != 0 {
		return errors.New("ERR syntax error")
	}
	n := len(args) / 2
	sp := make([]*spec, n)
	seen := make(map[string]bool, n)
	for k := 0; k < n; k++ {
		name := args[2*k]
		s := lookup(name)
		if s == nil {
			return fmt.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", name)
		}
		if s.flags&fImmutable != 0 {
			return setFailed(name, "can't set immutable config")
		}
		if s.flags&fProtected != 0 && !c.protectedAllowed(local) {
			return setFailed(name, "can't set protected config")
		}
		// Like Redis, a name and its alias are not duplicates (the last wins).
		key := strings.ToLower(name)
		if seen[key] {
			return setFailed(name, "duplicate parameter")
		}
		seen[key] = true
		sp[k] = s
	}

	c.mu.Lock()
	newVals := make([]any, n)
	for k, s := range sp {
		cur := c.vals[s.idx].Load()
		for e := 0; e < k; e++ { // an alias set earlier in the same call
			if sp[e] == s {
				cur = newVals[e]
			}
		}
		words := []string{args[2*k+1]}
		if s.flags&fMulti != 0 {
			words = splitSpaces(args[2*k+1])
		}
		v, err := parseValue(s, words, cur)
		if err != nil {
			c.mu.Unlock()
			return setFailed(args[2*k], err.Error())
		}
		newVals[k] = v
	}

	old := make([]any, n)
	for k, s := range sp {
		old[k] = c.vals[s.idx].Load()
	}
	for k, s := range sp {
		c.vals[s.idx].Store(newVals[k])
	}
	// Apply hooks run once per directive, in argument order; a failure rolls
	// every value back and re-applies the old values.
	var applied []*spec
	for k, s := range sp {
		if containsSpec(applied, s) {
			continue
		}
		for _, fn := range c.onApply[s.idx] {
			if err := fn(); err != nil {
				for r := n - 1; r >= 0; r-- {
					c.vals[sp[r].idx].Store(old[r])
				}
				for _, a := range applied {
					for _, fn := range c.onApply[a.idx] {
						_ = fn()
					}
				}
				c.mu.Unlock()
				return setFailed(args[2*k], err.Error())
			}
		}
		applied = append(applied, s)
	}
	var hooks []func()
	for _, s := range applied {
		hooks = append(hooks, c.onChange[s.idx]...)
	}
	c.mu.Unlock()
	for _, fn := range hooks {
		fn()
	}
	return nil
}

func containsSpec(list []*spec, s *spec) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *Config) protectedAllowed(local bool) bool {
	switch c.EnableProtectedConfigs() {
	case "yes":
		return true
	case "local":
		return local
	}
	return false
}

// OnChange registers fn to run after every successful CONFIG SET that
// includes the directive (by name or alias). Hooks run after the new values
// are visible and outside any lock, so they may call getters or Set. It
// panics on an unknown directive name, a programming error.
func (c *Config) OnChange(name string, fn func()) {
	s := lookup(name)
	if s == nil {
		panic("config: OnChange for unknown directive " + name)
	}
	c.mu.Lock()
	c.onChange[s.idx] = append(c.onChange[s.idx], fn)
	c.mu.Unlock()
}

// OnApply registers fn to make a CONFIG SET of the directive take effect
// (e.g. rebinding the listener after port or bind change). It runs with the
// new values already visible; returning an error makes the whole CONFIG SET
// fail with that error text, restores the previous values and calls the
// apply hooks that had already succeeded again so they can revert. fn must
// not call Set.
func (c *Config) OnApply(name string, fn func() error) {
	s := lookup(name)
	if s == nil {
		panic("config: OnApply for unknown directive " + name)
	}
	c.mu.Lock()
	c.onApply[s.idx] = append(c.onApply[s.idx], fn)
	c.mu.Unlock()
}
