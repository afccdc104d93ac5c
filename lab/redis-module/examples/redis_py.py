"""redis-py's RedisBloom commands, unchanged, on the linebloom module.

A Python service written against RedisBloom calls ``r.bf()`` and ``r.cf()``; this script
makes those calls against a ``redis-server`` that loads only the linebloom module, and
checks every answer. It starts its own server on a free loopback port and stops it by
PID.

    python3 -m venv /tmp/py && /tmp/py/bin/pip install redis
    /tmp/py/bin/python lab/redis-module/examples/redis_py.py target/release/liblinebloom_redis.so
"""

import os
import socket
import subprocess
import sys
import tempfile
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(module):
    port = free_port()
    folder = tempfile.mkdtemp()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--dir", folder, "--loadmodule", os.path.abspath(module)],
        stdout=subprocess.DEVNULL)
    try:
        r = redis.Redis(port=port)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)

        # The seeds' two commands, as redis-py sends them.
        assert r.bf().add("myBloomFilter", "product:12345") == 1
        assert r.bf().exists("myBloomFilter", "product:12345") == 1
        assert r.bf().exists("myBloomFilter", "product:67890") == 0

        bf = r.bf()
        assert bf.reserve("users", 0.001, 10000, expansion=4)
        assert bf.madd("users", "alice", "bob") == [1, 1]
        assert bf.mexists("users", "alice", "carol") == [1, 0]
        assert bf.insert("guests", ["x", "y"], capacity=50, error=0.01) == [1, 1]
        info = bf.info("users")
        assert (info.capacity, info.insertedNum, info.filterNum, info.expansionRate) == (10000, 2, 1, 4)
        assert bf.card("users") == 2
        chunks, position = [], 0
        while True:
            position, data = bf.scandump("users", position)
            if position == 0:
                break
            chunks.append((position, data))
        for position, data in chunks:
            bf.loadchunk("users-copy", position, data)
        assert bf.mexists("users-copy", "alice", "bob", "carol") == [1, 1, 0]

        cf = r.cf()
        assert cf.reserve("sessions", 1000, expansion=2)
        assert cf.add("sessions", "s1") == 1
        assert cf.addnx("sessions", "s1") == 0
        assert cf.insert("sessions", ["s2", "s3"]) == [1, 1]
        assert cf.insertnx("sessions", ["s3", "s4"]) == [0, 1]
        assert cf.count("sessions", "s1") == 1
        assert cf.delete("sessions", "s1") == 1
        assert cf.exists("sessions", "s1") == 0
        assert cf.mexists("sessions", "s2", "s9") == [1, 0]
        info = cf.info("sessions")
        assert (info.insertedNum, info.deletedNum, info.filterNum, info.expansionRate) == (3, 1, 1, 2)
        print("redis-py's bf() and cf() calls: every answer as from RedisBloom")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: redis_py.py path/to/liblinebloom_redis.so")
    main(sys.argv[1])
