#!/usr/bin/python3
"""Writes the seed corpus of fuzz_burst (tests/fuzz/fuzz_burst.in/): frame sequences in the
input format fuzz_burst.c reads (its header comment and next_frame()). Run once; the files are
committed. Existing files are left as they are, so seeds that found something stay. Standard
library only (make_corpus.py, for the other targets, needs dnspython).

Each seed is a configuration byte and records:
  fresh(kind, fl, name, qtype, ...)  a query built from the table of names or random labels
  again(back)                        a frame sent before, again (answer cache hits)
  variant(back, at, val, fix)        one of them with the byte at `at` set to `val`
  damaged(back, how, arg)            one of them damaged (fuzz_burst.c damage())
  END                                the burst ends
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "fuzz_burst.in")

# configuration bits (fuzz_burst.c LLVMFuzzerTestOneInput())
CACHE, LARGE, SMALL_CACHE, OFFLOAD, GOOD = 1, 2, 4, 8, 0x20
# fl bits (next_frame())
V6, EDNS, DO, ECS, COOKIE, RD, DST2 = 1, 2, 4, 8, 16, 32, 64
# indices of fuzz_burst.c names[], parents[] and qtypes[]
WWW, APEX, NOPE, MIXED, NSEC3_NOPE, OTHER = 0, 1, 27, 28, 36, 41
STEERED, WWW_COM, COM, NOPE_COM = 44, 45, 46, 47
N_NAMES = 48
P_DIFF, P_NSEC3, P_SECOND, P_DEEP, P_WILD, P_SUB = 0, 1, 2, 3, 4, 5
T_A, T_AAAA, T_TXT, T_MX, T_DS = 0, 1, 4, 5, 10
N_QTYPES = 30
END = bytes([7])


def fresh(fl, name, qtype=T_A, kind=0, payload=0, labels=(), ecs=0):
    b = bytes([kind | payload << 3, fl, name, qtype])
    for lab in labels:
        b += bytes([(len(lab) - 1) % 24]) + lab
    if kind == 3:
        b += bytes([0x5a])  # the letters whose case flips
    if fl & ECS:
        b += bytes([ecs])
    return b


def nx(fl, parent, length, rnd, qtype=T_A, two=0):
    """A random label of `length` below parents[parent] (kind 1; two labels: kind 2)."""
    labs = [bytes(rnd.randrange(36) for _ in range(length))]
    if two:
        labs.append(bytes(rnd.randrange(36) for _ in range(two)))
    return fresh(fl, parent, qtype, kind=2 if two else 1, labels=labs)


def again(back):
    return bytes([4, back])


def variant(back, at, val, fix=3):
    return bytes([5, back, at >> 8, at & 255, val, fix])


def damaged(back, how, arg=0):
    return bytes([6, back, how, arg])


def publish(down):
    """The burst ends and the steering table is published with target `down` down (-1: none)."""
    return bytes([0x80 | (down + 1) << 3 | 7])


def reload():
    """The burst ends and the other image is published (second.test. gone, or back)."""
    return bytes([0x40 | 7])


def put(name, data):
    os.makedirs(DIR, exist_ok=True)
    p = os.path.join(DIR, name)
    if not os.path.exists(p):
        with open(p, "wb") as f:
            f.write(data)


def names_seed(cfg, fl):
    """Every name of the table, then each again (a store), again (hits), in bursts."""
    b = bytes([cfg])
    for i in range(N_NAMES):
        b += fresh(fl | (V6 if i % 3 == 2 else 0), i, [T_A, T_AAAA, T_TXT, T_MX][i % 4])
        if i % 16 == 15:
            b += END
    for _ in range(2):
        b += END
        for i in range(N_NAMES):
            b += again(N_NAMES - 1)
            if i % 20 == 19:
                b += END
    return b


def flood_seed(cfg, fl, parent, length, n, rnd, lens=None, hits=True):
    """A random-subdomain flood below one encloser, in bursts of 32, a hit now and then."""
    b = bytes([cfg]) + fresh(EDNS, WWW) + fresh(EDNS, WWW)
    for i in range(n):
        ln = length if lens is None else rnd.randint(*lens)
        b += nx(fl, parent, ln, rnd)
        if i % 32 == 31:
            b += END
        if hits and i % 50 == 49:
            b += again(i % 40 + 1)
    return b + END


rnd = random.Random(53)
put("names-cache-v4.bin", names_seed(CACHE, EDNS))
put("names-cache-do.bin", names_seed(CACHE, EDNS | DO))
put("names-nocache.bin", names_seed(0, EDNS))
put("names-noedns.bin", names_seed(CACHE, 0))
put("names-large.bin", names_seed(LARGE, EDNS))
put("names-large-do.bin", names_seed(LARGE | CACHE, EDNS | DO | RD))
put("names-small-cache.bin", names_seed(CACHE | SMALL_CACHE, EDNS | DST2))
put("names-good.bin", names_seed(CACHE | GOOD, EDNS))
put("names-ecs.bin", names_seed(CACHE, EDNS | ECS))
put("names-offload.bin", names_seed(CACHE | OFFLOAD, EDNS))
put("names-offload-large.bin", names_seed(LARGE | OFFLOAD, EDNS | DO))
put("names-cookie.bin", names_seed(CACHE, EDNS | COOKIE))
put("flood-cache.bin", flood_seed(CACHE, EDNS, P_DIFF, 8, 120, rnd))
put("flood-nocache.bin", flood_seed(0, EDNS, P_DIFF, 8, 120, rnd))
put("flood-nsec3.bin", flood_seed(CACHE, EDNS, P_NSEC3, 12, 100, rnd))
put("flood-v6.bin", flood_seed(CACHE, EDNS | V6, P_DIFF, 8, 100, rnd))
put("flood-lens.bin", flood_seed(CACHE, EDNS, P_DIFF, 0, 150, rnd, lens=(1, 20)))
put("flood-lens-nocache.bin", flood_seed(0, EDNS, P_SECOND, 0, 100, rnd, lens=(1, 12)))
put("flood-deep.bin", flood_seed(CACHE, EDNS, P_DEEP, 6, 100, rnd))
put("flood-large.bin", flood_seed(LARGE, EDNS, P_DIFF, 8, 80, rnd))
put("flood-noedns.bin", flood_seed(CACHE, 0, P_DIFF, 8, 80, rnd, hits=False))

# The kept name error's frame, then frames of its length that differ in one byte (their
# checksums made right, or not): each check of nx_frame() against the general path's.
b = bytes([CACHE]) + flood_seed(0, EDNS, P_DIFF, 8, 40, rnd)[1:]
at_list = [0, 5, 6, 12, 13, 14, 16, 17, 20, 21, 23, 26, 30, 33, 35, 36, 37, 38, 39, 40, 41,
           42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 60, 61, 62, 63, 64, 65, 66,
           67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79]
for i, at in enumerate(at_list):
    b += variant(i % 3, at, rnd.randrange(256), 3 if i % 4 else 2)
    b += nx(EDNS, P_DIFF, 8, rnd)
    if i % 10 == 9:
        b += END
put("nx-variants.bin", b)
b = bytes([0]) + flood_seed(0, EDNS, P_DIFF, 8, 40, rnd)[1:]
for i, at in enumerate(at_list):
    b += variant(i % 2, at, [0, 1, 0x80, 0xff, 0x20, 0x40][i % 6], 3)
    b += nx(EDNS, P_DIFF, 8, rnd)
    if i % 8 == 7:
        b += END
put("nx-variants-nocache.bin", b)
# Frames of the kept length but another shape: two labels, another parent, IPv6, DO=1.
b = bytes([CACHE])
for i in range(120):
    r = i % 6
    if r == 0 or r == 1:
        b += nx(EDNS, P_DIFF, 8, rnd)
    elif r == 2:
        b += nx(EDNS, P_DIFF, 4, rnd, two=3)
    elif r == 3:
        b += nx(EDNS, P_WILD, 3, rnd)
    elif r == 4:
        b += nx(EDNS | DO, P_DIFF, 8, rnd)
    else:
        b += nx(EDNS | V6, P_DIFF, 8, rnd)
    if i % 32 == 31:
        b += END
put("nx-shapes.bin", b)
put("nx-shapes-nocache.bin", bytes([0]) + b[1:])
put("nx-shapes-large.bin", bytes([LARGE]) + b[1:])

# Frames of the kept name error's length in other shapes: IPv6 with a name 20 bytes shorter,
# ECS with a name the option's bytes shorter, no EDNS with a name 11 bytes longer, IPv4
# options (damage 15) with a name 4 bytes shorter, trailing bytes after a shorter name.
for cfg, tag in ((CACHE, "cache"), (0, "nocache")):
    b = bytes([cfg])
    for i in range(96):
        r = i % 8
        if r < 3:
            b += nx(EDNS, P_DIFF, 22, rnd)
        elif r == 3:
            b += nx(EDNS | V6, P_DIFF, 2, rnd)
        elif r == 4:
            b += fresh(EDNS | ECS, P_DIFF, T_A, kind=1, ecs=24,
                       labels=[bytes(rnd.randrange(36) for _ in range(11))])
        elif r == 5:
            b += nx(0, P_DIFF, 24, rnd, two=8)
        elif r == 6:
            b += nx(EDNS, P_DIFF, 18, rnd) + damaged(0, 15)
        else:
            b += nx(EDNS, P_DIFF, 19, rnd) + damaged(0, 1, 2)
        if i % 24 == 23:
            b += END
    put(f"nx-samelen-{tag}.bin", b)

# Damage of every kind, between answered frames, in bursts.
for cfg, tag in ((CACHE, "cache"), (0, "nocache"), (LARGE, "large"), (CACHE | OFFLOAD, "offload")):
    b = bytes([cfg])
    for how in range(20):
        b += fresh(EDNS | (V6 if how % 2 else 0), WWW, T_A) + damaged(0, how, rnd.randrange(256))
        b += fresh(EDNS, NOPE) + again(0) + nx(EDNS, P_DIFF, 8, rnd) + damaged(0, how, 7)
        if how % 5 == 4:
            b += END
    put(f"damage-{tag}.bin", b)

# Mixed case, every qtype, random mixes.
b = bytes([CACHE])
for t in range(N_QTYPES):
    b += fresh(EDNS | (DO if t % 2 else 0), [WWW, APEX, NOPE, MIXED, NSEC3_NOPE][t % 5], t)
    b += fresh(EDNS, [WWW, APEX, 13][t % 3], t, kind=3)
b += END + b[1:]
put("qtypes.bin", b)
for k in range(6):
    b = bytes([[CACHE, 0, LARGE, CACHE | SMALL_CACHE, CACHE | GOOD, LARGE | CACHE][k]])
    for i in range(200):
        r = rnd.randrange(10)
        if r < 3:
            b += fresh(rnd.randrange(128), rnd.randrange(N_NAMES), rnd.randrange(N_QTYPES),
                       payload=rnd.randrange(4), ecs=rnd.randrange(256))
        elif r < 5:
            b += nx(EDNS | rnd.choice([0, 0, V6, DO]), rnd.randrange(4), rnd.randrange(1, 12), rnd)
        elif r < 7:
            b += again(rnd.randrange(20))
        elif r < 8:
            b += variant(rnd.randrange(10), rnd.randrange(90), rnd.randrange(256), rnd.randrange(4))
        elif r < 9:
            b += damaged(rnd.randrange(10), rnd.randrange(20), rnd.randrange(256))
        else:
            b += END
    put(f"mix{k}.bin", b)
# Steering: the steered name from the packet's source and with ECS (addresses in the map's
# nested subnets, in none, SOURCE 0..32 / 0..56), asked again (the pick cache), with DO=1,
# and republished with a target down between bursts (a health change: a new table).
for cfg, tag in ((CACHE, "cache"), (0, "nocache"), (CACHE | SMALL_CACHE, "small"), (LARGE, "large")):
    b = bytes([cfg])
    for rnd_pass in range(3):
        for i in range(48):
            fl = EDNS | (ECS if i % 4 else 0) | (V6 if i % 5 == 1 else 0) | (DO if i % 7 == 3 else 0)
            b += fresh(fl | (0x80 if i % 2 else 0), STEERED, T_A, ecs=rnd.randrange(256))
            b += again(rnd.randrange(4))
            if i % 6 == 5:
                b += fresh(EDNS | ECS, [WWW_COM, COM, NOPE_COM][i % 3], T_A, ecs=rnd.randrange(256))
            if i % 16 == 15:
                b += publish(rnd.randrange(-1, 3))
    put(f"steer-{tag}.bin", b)
# Reloads between bursts: names of second.test. (answered, then REFUSED, then answered
# again) and a flood below it, from the cache and the kept name error of the image before.
for cfg, tag in ((CACHE, "cache"), (0, "nocache"), (LARGE | CACHE, "large")):
    b = bytes([cfg])
    for k in range(6):
        for i in range(20):
            b += fresh(EDNS | (V6 if i % 4 == 3 else 0), [29, 30, 31, 32, WWW][i % 5], T_A)
            b += again(0)
            b += nx(EDNS, P_SECOND, 8, rnd) + nx(EDNS, P_DIFF, 8, rnd)
        b += reload()
    put(f"reload-{tag}.bin", b)
    # a flood below second.test. across the reloads: the kept name error and encloser are the
    # image's before
    b = bytes([cfg])
    for k in range(6):
        for i in range(40):
            b += nx(EDNS | (V6 if i % 9 == 8 else 0), P_SECOND, 8, rnd)
            if i % 16 == 15:
                b += END
        b += reload()
    put(f"reload-flood-{tag}.bin", b)
# Floods of first labels of many lengths over IPv6 (nx_frame_any6()), and over both families
# at once: the lengths overlap (an IPv4 frame whose first label is 20 bytes longer has the
# kept IPv6 frame's length, an IPv6 one 20 bytes shorter the kept IPv4 frame's), so each
# frame's family sorts it (fastpath.c nx_step()).
put("flood-lens-v6.bin", flood_seed(CACHE, EDNS | V6, P_DIFF, 0, 150, rnd, lens=(1, 20)))
put("flood-lens-v6-nocache.bin", flood_seed(0, EDNS | V6, P_SECOND, 0, 100, rnd, lens=(1, 24)))
for cfg, tag in ((CACHE, "cache"), (0, "nocache")):
    b = bytes([cfg]) + nx(EDNS, P_DIFF, 3, rnd)
    for i in range(160):
        v6 = V6 if i % 2 else 0
        ln = [3, 23, 1, 21, rnd.randint(1, 24)][i % 5]
        b += nx(EDNS | v6, P_DIFF, ln, rnd)
        if i % 32 == 31:
            b += END
    put(f"nx-lens-families-{tag}.bin", b)
print("corpus written under", DIR)
