// A mixed workload through ioredis's Cluster client: node mixed.js HOST:PORT
// connects to the Redis Cluster that node is in, prints one line per reply
// and exits 1 on the first error. The same workload on two clusters prints
// the same lines.
'use strict';

const { Cluster } = require('ioredis');

const [host, port] = process.argv[2].split(':');
const cluster = new Cluster([{ host, port: Number(port) }]);

function print(what, reply) {
  console.log(`${what}: ${JSON.stringify(reply)}`);
}

async function run() {
  // Strings over many slots.
  for (let i = 0; i < 200; i++) {
    await cluster.set(`page:${i}`, `v${i}`, 'EX', 3600);
  }
  for (let i = 0; i < 200; i += 17) {
    print(`get page:${i}`, await cluster.get(`page:${i}`));
    print(`incr counter:${i}`, await cluster.incr(`counter:${i}`));
  }

  // Seed 000's resolver cache: an entry per name (its own slot), then the
  // hit counters and expiry index in one pipeline of "{dnsmeta}:" keys,
  // all on one slot as ioredis's cluster pipelines require.
  const now = 1704067200;
  for (let i = 0; i < 50; i++) {
    const key = `dns:host${i}.example.com.:1:1`;
    print(`entry ${key}`, await cluster.pipeline()
      .hset(key, 'msg', Buffer.from([0, 1, 2, i]), 'soft_expiry', now + i, 'created_at', now)
      .expire(key, 600)
      .exec());
    print(`metadata ${key}`, await cluster.pipeline()
      .zadd('{dnsmeta}:expiry:index', now + i, key)
      .incrby(`{dnsmeta}:hit:${key}`, i % 5)
      .expire(`{dnsmeta}:hit:${key}`, 300)
      .set(`{dnsmeta}:refresh:${key}`, '1', 'EX', 10, 'NX')
      .exec());
  }
  print('expiry index', await cluster.zrangebyscore('{dnsmeta}:expiry:index', '-inf', now + 9, 'WITHSCORES'));
  print('hits', await cluster.mget('{dnsmeta}:hit:dns:host3.example.com.:1:1', '{dnsmeta}:hit:dns:host4.example.com.:1:1'));
  const entry = await cluster.hgetallBuffer('dns:host7.example.com.:1:1');
  print('entry msg', [...entry.msg]);

  // Multi-key commands and transactions on one hash tag.
  for (let u = 0; u < 20; u++) {
    const tag = `{user:${u}}`;
    await cluster.mset(`${tag}:name`, `user${u}`, `${tag}:visits`, 0);
    print(`multi ${tag}`, await cluster.multi()
      .incrby(`${tag}:visits`, u)
      .lpush(`${tag}:events`, 'login', 'view')
      .sadd(`${tag}:roles`, 'reader')
      .exec());
    print(`mget ${tag}`, await cluster.mget(`${tag}:name`, `${tag}:visits`));
    print(`lrange ${tag}`, await cluster.lrange(`${tag}:events`, 0, -1));
  }

  // A cross-slot command is the server's CROSSSLOT error, as in Redis.
  try {
    await cluster.mget('page:1', 'page:2');
    print('cross-slot mget', 'no error');
  } catch (err) {
    print('cross-slot mget', err.message.split(' ')[0]);
  }
}

run()
  .then(() => cluster.quit())
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
