#!/usr/bin/env python3
"""A link with a fixed one-way delay, for tests/cluster/cluster.sh.

This kernel has no sch_netem (nor fq, whose departure times a BPF program
could set), so tc cannot delay a packet.  Instead each host's network
namespace gets a TUN device, eth0, carrying its address, and this process
is the wire between them: it reads every IPv4 packet any host sends, holds
it DELAY milliseconds and writes it into the TUN device of the host that
owns the packet's destination address.  Every packet waits the same time,
so one first-in first-out queue keeps them in order.

    delay.py DELAY_MS MTU READY_FILE NETNS,DEVICE,ADDRESS...

NETNS is a name under /run/netns, or "-" for this process's own namespace,
DEVICE the TUN device to create there, ADDRESS the IPv4 address it will
carry.  The devices
are created here (and vanish when this process ends); the caller gives
them their addresses, MTU and state once READY_FILE exists.  Ends on
SIGTERM or SIGINT.
"""
import collections
import ctypes
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000


def tun_in(libc, netns, name):
    """Opens a TUN device NAME inside network namespace NETNS."""
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        if netns != "-":
            ns = os.open("/run/netns/" + netns, os.O_RDONLY)
            try:
                if libc.setns(ns, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, "setns " + netns + ": " +
                                  os.strerror(err))
            finally:
                os.close(ns)
        fd = os.open("/dev/net/tun", os.O_RDWR)
        fcntl.ioctl(fd, TUNSETIFF,
                    struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    finally:
        libc.setns(here, CLONE_NEWNET)
        os.close(here)
    os.set_blocking(fd, False)
    return fd


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: delay.py DELAY_MS MTU READY_FILE "
                 "NETNS,DEVICE,ADDRESS...")
    delay = float(sys.argv[1]) / 1000.0
    mtu = int(sys.argv[2])
    ready = sys.argv[3]
    libc = ctypes.CDLL(None, use_errno=True)
    route = {}
    fds = []
    for arg in sys.argv[4:]:
        netns, dev, addr = arg.split(",")
        fd = tun_in(libc, netns, dev)
        route[socket.inet_aton(addr)] = fd
        fds.append(fd)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    with open(ready, "w") as f:
        f.write("%d\n" % os.getpid())

    held = collections.deque()
    clock = time.monotonic
    bufsize = mtu + 64
    while True:
        now = clock()
        while held and held[0][0] <= now:
            _, fd, pkt = held.popleft()
            try:
                os.write(fd, pkt)
            except OSError:
                pass    # a host's queue is full or its device is down: lost
        wait = max(0.0, held[0][0] - now) if held else None
        readable, _, _ = select.select(fds, [], [], wait)
        due = clock() + delay
        for fd in readable:
            for _ in range(64):
                try:
                    pkt = os.read(fd, bufsize)
                except BlockingIOError:
                    break
                if len(pkt) < 20 or pkt[0] >> 4 != 4:
                    continue    # IPv6 router solicitations and the like
                out = route.get(pkt[16:20])
                if out is not None:
                    held.append((due, out, pkt))


if __name__ == "__main__":
    main()
