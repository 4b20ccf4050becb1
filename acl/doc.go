// Package acl is Redis 7.2's access control model: users with passwords and
// permissions, the rules of ACL SETUSER that build them and describe them
// back (ACL LIST, ACL GETUSER, the ACL file), the check of a command against
// them, and the ACL LOG.
//
// A user's permissions are a root selector (commands, key patterns with
// read/write rights, channel patterns) plus any number of further selectors;
// a command is allowed if one selector allows it. Commands are known through
// a Catalog the server builds from its command table: the check takes a
// command's id, its arguments and its key arguments, and allocates nothing.
// A user that may do everything is Unrestricted: the server skips the check.
//
// The package knows nothing of connections: the server keeps which user a
// client acts as, disconnects the clients of a deleted user, and writes the
// ACL command's replies with the texts this package words.
package acl
