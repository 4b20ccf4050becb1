package server

import (
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/keyhive/keyhive/cluster"
	"github.com/keyhive/keyhive/keyspace"
)

// The server's side of a cluster node (cluster-enabled yes): it opens the
// node (package cluster: the node table and the bus) when it starts, and
// is the node's host, deleting the keys of slots another master took,
// delivering the messages published elsewhere in the cluster, and
// replicating from the master the node follows (or becoming a master when
// it wins an election) through REPLICAOF's paths. The other
// concerns are in cluster_redirect.go (the dispatch path's check),
// cmd_cluster.go (the commands) and cluster_migrate.go (MIGRATE).

// startCluster opens the node and its bus, before the client listeners.
func (s *Server) startCluster() error {
	port, busPort := s.cfg.Port(), s.cfg.ClusterPort()
	if busPort == 0 {
		if port == 0 {
			return errors.New("cluster mode on a free port (port 0) needs cluster-port")
		}
		busPort = port + 10000
	}
	if busPort > 65535 {
		return fmt.Errorf("cluster bus port %d out of range: set cluster-port", busPort)
	}
	file := s.cfg.ClusterConfigFile()
	if !filepath.IsAbs(file) {
		file = filepath.Join(s.cfg.Dir(), file)
	}
	opt := cluster.Options{
		ConfigFile:          file,
		Port:                port,
		BusPort:             busPort,
		RequireFullCoverage: s.cfg.ClusterRequireFullCoverage,
		Failover: cluster.FailoverOptions{
			NoFailover:     s.cfg.ClusterReplicaNoFailover,
			ValidityFactor: s.cfg.ClusterReplicaValidityFactor,
			PingPeriod:     func() int64 { return int64(s.cfg.ReplPingReplicaPeriod()) * 1000 },
		},
		BindAddresses: s.cfg.Bind(),
		Logger:        s.log,
	}
	s.clusterSettings(&opt)
	node, err := cluster.Open(opt, clusterHost{s})
	if err != nil {
		return err
	}
	if err := node.Start(); err != nil {
		return fmt.Errorf("opening the cluster bus port %d: %w", busPort, err)
	}
	s.cluster = node
	s.startSlotStats()
	// CONFIG SET of these takes effect at once, as in Redis.
	for _, name := range []string{"cluster-node-timeout", "cluster-announce-ip", "cluster-announce-hostname",
		"cluster-announce-port", "cluster-announce-bus-port"} {
		s.cfg.OnChange(name, func() {
			var opt cluster.Options
			s.clusterSettings(&opt)
			node.Reconfigure(opt)
		})
	}
	return nil
}

// announceClusterPort tells the node the client port picked for port 0.
func (s *Server) announceClusterPort() {
	if _, p, err := net.SplitHostPort(s.Addr()); err == nil {
		port, _ := strconv.Atoi(p)
		s.cluster.SetPort(port)
	}
}

// clusterSettings fills the node's options that CONFIG SET may change.
func (s *Server) clusterSettings(opt *cluster.Options) {
	cfg := s.cfg
	opt.NodeTimeout = time.Duration(cfg.ClusterNodeTimeout()) * time.Millisecond
	opt.AnnounceIP = cfg.ClusterAnnounceIP()
	opt.AnnounceHostname = cfg.ClusterAnnounceHostname()
	opt.AnnouncePort = cfg.ClusterAnnouncePort()
	opt.AnnounceBusPort = cfg.ClusterAnnounceBusPort()
}

// clusterHost is the server as the cluster node's host.
type clusterHost struct{ s *Server }

// DeleteKeysInSlot drops a lost slot's keys under the exclusive lock,
// propagating each as a DEL.
func (h clusterHost) DeleteKeysInSlot(slot int) {
	s := h.s
	var set keyspace.LockSet
	set.All()
	db := s.ks.Lock(0, &set)
	var keys [][]byte
	db.KeysInSlot(slot, int(db.Len()), func(k []byte) { keys = append(keys, append([]byte(nil), k...)) })
	for _, k := range keys {
		if db.Delete(k) {
			s.propagateExpired(0, k) // a DEL (or UNLINK), as for an expired key
		}
	}
	s.ks.Unlock(db, &set)
}

// Deliver publishes a message another node received.
func (h clusterHost) Deliver(channel, message []byte, sharded bool) {
	h.s.publish(nil, channel, message, sharded)
}

// UnsubscribeSlots ends the subscriptions to the shard channels of slots
// and zeroes their SLOT-STATS counters: they left this node's shard.
func (h clusterHost) UnsubscribeSlots(slots *cluster.Slots) {
	h.s.unsubscribeSlots(slots.Has)
	h.s.slotStats.Reset(slots.Has)
}

// Replicate follows the node's master (CLUSTER REPLICATE, a failover
// elsewhere), or promotes this server when ip is "" (it won an election):
// REPLICAOF's and REPLICAOF NO ONE's paths.
func (h clusterHost) Replicate(ip string, port int) {
	if ip == "" {
		if h.s.repl.BecomeMaster() {
			h.s.log.Printf("Setting myself as a master: the cluster made me one")
		}
		return
	}
	h.s.repl.Follow(ip, port)
}

// ReplicationOffset is the offset the node's messages carry.
func (h clusterHost) ReplicationOffset() int64 { return h.s.repl.Offset() }

// ReplicationDataAge is 0 while the link to the master is up, else the ms
// since it went down (a long time when it never was up).
func (h clusterHost) ReplicationDataAge() int64 {
	isDown, down := h.s.repl.LinkDown()
	if !isDown {
		return 0
	}
	if down == 0 {
		return math.MaxInt64 / 2
	}
	return time.Now().UnixMilli() - down*1000
}

// PauseWrites pauses the writers for a manual failover (as CLIENT PAUSE
// WRITE), and the replication stream's PINGs with them, or ends the pause.
func (h clusterHost) PauseWrites(untilMs int64) {
	h.s.repl.HoldPings(untilMs)
	if untilMs == 0 {
		h.s.unpauseClients()
		return
	}
	h.s.pauseClients(pauseWrite, untilMs)
}
