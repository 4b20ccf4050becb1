package acl

import (
	"errors"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Users are a server's users and its ACL LOG.
//
// A user's permissions are an immutable value swapped atomically: ACL SETUSER
// builds the new value on a copy (so a failing rule changes nothing, as in
// Redis) and clients of the user see it from their next command.
type Users struct {
	cat *Catalog
	// allChannels is acl-pubsub-default: whether new users, new selectors
	// and reset allow every channel.
	allChannels func() bool
	Log         Log

	mu    sync.Mutex
	users map[string]*User
	def   *User
}

// New returns the users a server starts with: the default user, which may
// do everything without a password.
func New(cat *Catalog, allChannels func() bool) *Users {
	def := &User{Name: "default"}
	def.perms.Store(defaultPerms(cat))
	return &Users{cat: cat, allChannels: allChannels, users: map[string]*User{"default": def}, def: def}
}

// Default is the user a new connection acts as.
func (u *Users) Default() *User { return u.def }

// User returns the named user, or nil.
func (u *Users) User(name string) *User {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.users[name]
}

// Names returns the users' names in order.
func (u *Users) Names() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	names := make([]string, 0, len(u.users))
	for n := range u.users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SetRequirePass makes pass (none if empty) the default user's only
// password, as Redis does with requirepass at startup and on CONFIG SET.
func (u *Users) SetRequirePass(pass string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.def.perms.Load().clone()
	p.nopass, p.passwords = false, nil
	if pass != "" {
		p.addPassword(hashPassword([]byte(pass)))
	} else {
		p.nopass = true
	}
	u.def.perms.Store(p.seal())
}

// Configure creates the users of the config file's user directives, or
// of the ACL file, at startup.
func (u *Users) Configure(decls [][]string, file string) error {
	if len(decls) > 0 && file != "" {
		return errUsersAndFile
	}
	for _, d := range decls {
		if len(d) < 1 {
			continue
		}
		rules := d[1:]
		if d[0] == "default" { // Redis resets it before a user directive's rules
			rules = append([]string{"reset"}, rules...)
		}
		if err := u.set(d[0], rules, true); err != nil {
			return errors.New("Error in user declaration '" + d[0] + "': " + err.Error())
		}
	}
	if file != "" {
		_, err := u.Load(file)
		return err
	}
	return nil
}

// Set is ACL SETUSER: the rules apply to a copy of the user (a new one if
// there is none), published only if all of them are valid.
func (u *Users) Set(name string, rules []string) error {
	if strings.ContainsAny(name, " \x00") {
		return errUserNameSpaces
	}
	return u.set(name, rules, false)
}

// set applies the rules of ACL SETUSER or of a user directive, which may
// not name a user twice.
func (u *Users) set(name string, rules []string, fromConfig bool) error {
	merged, open := mergeSelectorArgs(rules)
	if open >= 0 {
		return errors.New("Unmatched parenthesis in acl selector starting at '" + rules[open] + "'.")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	user := u.users[name]
	var p *Perms
	if user != nil {
		if fromConfig && user != u.def {
			return errDuplicateUser
		}
		p = user.perms.Load().clone()
	} else {
		p = newPerms(u.cat, u.allChannels())
	}
	for _, r := range merged {
		if err := p.apply(r, u.allChannels()); err != nil {
			if fromConfig {
				return err
			}
			return errors.New("Error in ACL SETUSER modifier '" + r + "': " + err.Error())
		}
	}
	if user == nil {
		user = &User{Name: name}
		u.users[name] = user
	}
	user.perms.Store(p.seal())
	return nil
}

// Delete is ACL DELUSER: it removes the named users and returns those
// that existed. The default user cannot be removed.
func (u *Users) Delete(names []string) (map[*User]bool, error) {
	if slices.Contains(names, "default") {
		return nil, errDeleteDefault
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	gone := map[*User]bool{}
	for _, name := range names {
		if user := u.users[name]; user != nil {
			gone[user] = true
			delete(u.users, name)
		}
	}
	return gone, nil
}

// List is the users in ACL LIST's format, the ACL file's.
func (u *Users) List() []string {
	var lines []string
	for _, n := range u.Names() {
		if user := u.User(n); user != nil {
			lines = append(lines, "user "+n+" "+user.perms.Load().describe())
		}
	}
	return lines
}

// Save is ACL SAVE: the users replace the ACL file at once.
func (u *Users) Save(path string) error {
	var b strings.Builder
	for _, l := range u.List() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	err := os.WriteFile(tmp, []byte(b.String()), 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Load replaces the users with those of an ACL file, or reports the file's
// errors (Redis's texts) and changes nothing. A user the file keeps keeps
// its clients, with the new permissions; it returns the users it dropped,
// whose clients are to be disconnected.
func (u *Users) Load(path string) (dropped map[*User]bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.New("Error loading ACLs, opening file '" + path + "': " + errnoText(err))
	}
	users, errs := parseFile(u.cat, path, string(data), u.allChannels())
	if errs != "" {
		return nil, errors.New(errs + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
	}
	if users["default"] == nil {
		users["default"] = defaultPerms(u.cat)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	dropped = map[*User]bool{}
	for name, user := range u.users {
		if users[name] == nil {
			dropped[user] = true
			delete(u.users, name)
		}
	}
	for name, p := range users {
		user := u.users[name]
		if user == nil {
			user = &User{Name: name}
			u.users[name] = user
		}
		user.perms.Store(p)
	}
	return dropped, nil
}

// parseFile reads ACL file lines ("user <name> <rules>...", split on
// single spaces as Redis does); errs lists the errors of every bad line.
func parseFile(cat *Catalog, path, data string, allChannels bool) (users map[string]*Perms, errs string) {
	users = map[string]*Perms{}
	for i, line := range strings.Split(data, "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		args := strings.Split(line, " ")
		if args[0] != "user" || len(args) < 2 {
			errs += path + ":" + strconv.Itoa(n) + " should start with user keyword followed by the username. "
			continue
		}
		name := args[1]
		if users[name] != nil {
			errs += "WARNING: Duplicate user '" + name + "' found on line " + strconv.Itoa(n) + ". "
			continue
		}
		p := newPerms(cat, allChannels)
		users[name] = p
		merged, open := mergeSelectorArgs(args[2:])
		if open >= 0 {
			errs += path + ":" + strconv.Itoa(n) + ": Unmatched parenthesis in selector definition."
			continue
		}
		if errs != "" {
			continue
		}
		// Unknown commands are all reported (naming them tells nothing
		// secret); of the other errors only the first, as in Redis.
		syntaxError := false
		for _, r := range merged {
			r = strings.Trim(r, "\t\r\n")
			err := p.apply(r, allChannels)
			switch {
			case err == errUnknown:
				errs += path + ":" + strconv.Itoa(n) + ": Error in applying operation '" + r + "': " + err.Error() + ". "
			case err != nil && !syntaxError:
				errs += path + ":" + strconv.Itoa(n) + ": " + err.Error() + ". "
				syntaxError = true
			}
		}
		p.seal()
	}
	return users, errs
}

// errnoText is an OS error as C's strerror words it.
func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	s := err.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
