// Package cluster is a Redis Cluster node: the node table, the ownership of
// the 16384 hash slots, the epochs, and the cluster bus that keeps them in
// agreement with the other nodes, compatible with Redis 7.0's.
//
// # The model
//
// Every node has a 40-character hex name, chosen once and kept in the
// cluster config file (nodes.conf). The node table (State) holds every node
// this one knows, myself included, with its address (ip, client port,
// cluster bus port, announced hostname), its flags (master, replica, myself,
// pfail, fail, handshake, noaddr, meet), the slots it serves and its config
// epoch. slots[i] is the owner of slot i from this node's point of view;
// migrating[i] and importing[i] are set during a resharding (CLUSTER SETSLOT).
//
// Epochs order conflicting claims: currentEpoch is the highest epoch seen in
// the cluster; a master's configEpoch versions its claim on its slots. When
// two masters claim a slot, the higher configEpoch wins; when two masters
// have the same configEpoch, the one with the smaller name takes a new epoch
// (the collision rule), so every master ends with a unique one.
//
// # The bus
//
// Each node listens on its cluster port (the client port + 10000 unless
// cluster-port says otherwise) and keeps one outbound link to every other
// node; the messages it receives on inbound links are answered on them. A
// message is a fixed header followed by a type-specific body, every integer
// in network byte order:
//
//	offset  size  field
//	     0     4  signature "RCmb"
//	     4     4  total length of the message
//	     8     2  protocol version (1)
//	    10     2  client port
//	    12     2  type (PING 0, PONG 1, MEET 2, FAIL 3, PUBLISH 4, FAILOVER_AUTH_REQUEST 5,
//	              FAILOVER_AUTH_ACK 6, UPDATE 7, MFSTART 8, PUBLISHSHARD 10)
//	    14     2  count (gossip entries)
//	    16     8  currentEpoch
//	    24     8  configEpoch (of the sender, or of its master)
//	    32     8  replication offset
//	    40    40  sender's name
//	    80  2048  the slots the sender (or its master) serves, a bitmap
//	  2128    40  the sender's master, zeros for a master
//	  2168    46  the sender's announced ip, zeros when unset
//	  2214     2  number of ping extensions
//	  2216    30  unused
//	  2246     2  plaintext client port (when the client port is TLS)
//	  2248     2  cluster bus port
//	  2250     2  sender's flags
//	  2252     1  cluster state from the sender's view (0 ok, 1 fail)
//	  2253     3  message flags (byte 0: 1 paused, 2 force ack, 4 extensions follow)
//	  2256        body
//
// PING, PONG and MEET carry count gossip entries of 104 bytes (name, ping
// sent and pong received in seconds, ip, port, cluster port, flags,
// plaintext port, 2 unused) and then the ping extensions, each a length
// (a multiple of 8, header included), a type and 2 unused bytes: type 0 is
// the announced hostname, NUL-terminated. FAIL carries the failed node's
// name; UPDATE a config epoch, a node's name and its slot bitmap; PUBLISH
// and PUBLISHSHARD the channel's and the message's lengths and bytes.
//
// # Failure detection
//
// A node that does not answer a ping within cluster-node-timeout is flagged
// pfail (possibly failing) and gossiped so. A master that receives gossip
// from a majority of the masters serving slots saying a node is pfail or
// fail flags it fail and broadcasts FAIL; a master flagged fail that comes
// back is cleared after a while, a replica or a slotless master at once.
//
// # Replicas and failover
//
// CLUSTER REPLICATE makes myself a replica (replica.go): its messages carry
// its master's name, slots and config epoch, and the host replicates from
// the master (Host.Replicate). When a master is flagged fail, its replicas
// run Redis's election (failover.go): FAILOVER_AUTH_REQUEST (type 5, no
// body) after a delay ranked by replication offset, FAILOVER_AUTH_ACK
// (type 6) from each master that votes; the winner takes the slots with
// the election's epoch and broadcasts a PONG. CLUSTER FAILOVER starts one
// by hand: MFSTART (type 8, no body) asks the master to pause its writers
// and send its offset, flagged paused (message flag 1); the replica's
// request then carries force ack (flag 2).
package cluster
