package acl

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/keyhive/keyhive/resp"
)

// The ACL command's replies and error texts, in Redis 7.2's words.

// WriteUser replies ACL GETUSER's map for a user's permissions.
func (p *Perms) WriteUser(w *resp.Writer) {
	w.Map(6)
	w.BulkString("flags")
	flags := p.flags()
	w.Set(len(flags))
	for _, f := range flags {
		w.BulkString(f)
	}
	w.BulkString("passwords")
	w.Array(len(p.passwords))
	for _, h := range p.passwords {
		w.BulkString(h)
	}
	p.root.writeFields(w)
	w.BulkString("selectors")
	w.Array(len(p.selectors))
	for _, s := range p.selectors {
		w.Map(3)
		s.writeFields(w)
	}
}

func (s *selector) writeFields(w *resp.Writer) {
	w.BulkString("commands")
	w.BulkString(s.describeCommands())
	w.BulkString("keys")
	w.BulkString(strings.Join(s.describeKeys(), " "))
	w.BulkString("channels")
	if s.allChannels {
		w.BulkString("&*")
	} else {
		w.BulkString(strings.Join(s.describeChannels(), " "))
	}
}

// NoPermError is the reply to a denied command outside scripts and EXEC.
func NoPermError(v Verdict, command, user string) string {
	return "NOPERM " + deniedText(v, command, user)
}

// deniedText says why a command was denied, which NOPERM replies and
// script errors share.
func deniedText(v Verdict, command, user string) string {
	switch v {
	case DeniedCommand:
		return "User " + user + " has no permissions to run the '" + command + "' command"
	case DeniedKey:
		return "No permissions to access a key"
	default:
		return "No permissions to access a channel"
	}
}

// ScriptError is the error of a script's redis.call the user may not run.
func ScriptError(v Verdict, command, user string) string {
	if v != DeniedCommand {
		user = ""
	}
	return "ERR ACL failure in script: " + deniedText(v, command, user)
}

// ExecError is EXEC's error for a queued command the user may no longer
// run.
func ExecError(v Verdict) string {
	const changed = "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: "
	switch v {
	case DeniedCommand:
		return changed + "no permission to execute the command or subcommand"
	case DeniedKey:
		return changed + "no permission to touch the specified keys"
	default:
		return changed + "no permission to access one of the channels used as arguments"
	}
}

// DryRunText is ACL DRYRUN's reply to a denied command.
func DryRunText(v Verdict, user, command string, object []byte) string {
	switch v {
	case DeniedCommand:
		return "User " + user + " has no permissions to run the '" + command + "' command"
	case DeniedKey:
		return "User " + user + " has no permissions to access the '" + string(object) + "' key"
	default:
		return "User " + user + " has no permissions to access the '" + string(object) + "' channel"
	}
}

// GenPass is ACL GENPASS: bits random bits in hexadecimal digits.
func GenPass(bits int64) string {
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	return hex.EncodeToString(buf)[:chars]
}

// Help is ACL HELP's text.
var Help = []string{
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
}
