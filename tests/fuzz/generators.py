"""Generators of command lines and input files for the fuzz suite, driven by a
``random.Random`` so the same functions serve hypothesis (``st.randoms()``) and the long
``make fuzz`` loop.

Two kinds of input: *generated* (every spec and option kind built from a grammar with hostile
numbers and words mixed in) and *mutated* (a valid command line or file with one token or byte
changed, duplicated, cut or replaced).
"""

from __future__ import annotations

import os
import random

HOSTILE_NUMBERS = ["0", "-1", "1e400", "nan", "inf", "-inf", "1e-320", "2.7", "1.0",
                   "99999999999999999999", "9" * 60, "0x10", "", " ", "1_000", "\u0663",
                   "4294967296", "2305843009213693951", "9223372036854775808", "true", "+3",
                   "1e9", "100000", "65537", "1000000000", "-0", "3 ", "\x00"]
HOSTILE_WORDS = ["", ":", "::", "=", ",", "x", "%s", "{}", "{id[0]}", "\u00e9", "\udcff",
                 "a" * 300, "../", "/dev/null", "-", "--", "'", '"', "\t", "nid", "é:é"]
SMALL = ["1", "2", "3", "4", "5", "8"]


def number(rng: random.Random, small=SMALL) -> str:
    """Mostly small valid numbers, sometimes hostile ones."""
    return rng.choice(small) if rng.random() < 0.9 else rng.choice(HOSTILE_NUMBERS)


def word(rng: random.Random) -> str:
    return rng.choice(HOSTILE_WORDS)


def shape(rng: random.Random, ndim=None, small=SMALL) -> str:
    ndim = ndim or rng.choice([1, 2, 2, 3, 3, 4, 7])
    return "x".join(number(rng, small) for _ in range(ndim))


def size(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return rng.choice(["1", "64", "1KiB", "8KiB", "1MiB", "1MB", "1.5KB", "2GiB"])
    return rng.choice(HOSTILE_NUMBERS + ["1e400B", "1ZiB", "-1MiB", "1.5", "1PiB", "2PiB"])


def bandwidth(rng):
    if rng.random() < 0.7:
        return rng.choice(["425MB/s", "10GB/s", "1GiB/s", "1e9", "1PB/s"])
    return rng.choice(HOSTILE_NUMBERS + ["1e-320", "0B/s", "1e400GB/s", "2PB/s", "x/s"])


def duration(rng):
    if rng.random() < 0.7:
        return rng.choice(["100ns", "1us", "0", "2ms", "0.5s"])
    return rng.choice(HOSTILE_NUMBERS + ["1e400s", "3601s", "-1ns", "1h"])


def _opts(rng, pairs) -> str:
    out = []
    for key, gen in pairs:
        if rng.random() < 0.3:
            out.append(f"{key}={gen(rng)}")
    if rng.random() < 0.05:  # a repeated key
        out += out[-1:]
    if rng.random() < 0.05:
        out.append(f"{word(rng)}={word(rng)}")
    return "".join(":" + o for o in out)


def machine(rng: random.Random, files=None) -> str:
    kind = rng.choice(["torus", "torus", "mesh", "bgp", "bgl", "fattree", "dragonfly", "xc",
                       "toml", "bogus"])
    common = [("cores", number), ("bw", bandwidth), ("lat", duration)]
    if kind in ("torus", "mesh"):
        return f"{kind}:{shape(rng)}" + _opts(rng, common + [("wrap", lambda r: r.choice(
            ["x", "xy", "none", "all", "q", ""]))])
    if kind == "bgp":
        return "bgp:" + rng.choice(["512", "4096", "3", number(rng)]) + _opts(rng, common)
    if kind == "bgl":
        return "bgl:" + rng.choice(["512", "1024", number(rng)])
    if kind == "fattree":
        if files is not None and rng.random() < 0.3:
            return f"fattree:topology={files.topology(rng)}" + _opts(rng, common)
        return f"fattree:k={number(rng)}:levels={number(rng, ['1', '2', '3'])}" + _opts(
            rng, common + [("taper", lambda r: r.choice(["1", "2", "0.5", "inf", "nan", "1e400"]))])
    if kind == "dragonfly":
        parts = [f"groups={number(rng)}"] + [f"{k}={number(rng)}" for k in
                                              ("rows", "cols", "nodes", "cores", "gports",
                                               "global") if rng.random() < 0.5]
        return "dragonfly:" + ",".join(parts)
    if kind == "xc":
        return f"xc:groups={number(rng)}" + _opts(rng, [("cores", number)])
    if kind == "toml" and files is not None:
        return files.machine_toml(rng)
    return word(rng) + ":" + shape(rng)


def pattern(rng: random.Random, files=None) -> str:
    kind = rng.choice(["stencil", "stencil", "fft2d", "pairs", "minighost", "minimd", "graph",
                       "toml", "bogus"])
    if kind == "stencil":
        flags = "".join(":" + f for f in ("box", "periodic", "star") if rng.random() < 0.25)
        grid = shape(rng) if rng.random() < 0.85 else f"dims={number(rng)}"
        return f"stencil:{grid}{flags}" + _opts(rng, [("bytes", size), ("times", number)])
    if kind == "fft2d":
        return f"fft2d:{shape(rng, 2)}" + _opts(rng, [("bytes", size), ("times", number)])
    if kind == "pairs":
        return "pairs:random" + _opts(rng, [("seed", number), ("ranks", number),
                                            ("bytes", size)])
    if kind in ("minighost", "minimd"):
        grid = ":" + shape(rng, 3) if rng.random() < 0.6 else ""
        return f"{kind}{grid}" + _opts(rng, [("bytes", size)])
    if kind == "graph" and files is not None:
        return f"graph:{files.graph(rng)}" + _opts(rng, [("bytes", size), ("ranks", number),
                                                         ("times", number)])
    if kind == "toml" and files is not None:
        return files.pattern_toml(rng)
    return f"{word(rng)}:{shape(rng)}"


def nodes(rng: random.Random, files=None) -> str:
    kind = rng.choice(["ids", "range", "random", "contiguous", "hostlist", "file", "site",
                       "word"])
    if kind == "ids":
        return ",".join(number(rng, ["0", "1", "2", "3"]) for _ in range(rng.randint(1, 4)))
    if kind == "range":
        return f"{number(rng, ['0', '1'])}-{number(rng, ['3', '7'])}"
    if kind == "random":
        return f"random:{number(rng)}" + "".join(f":seed={number(rng)}"
                                                 for _ in range(rng.choice([0, 1, 1, 2])))
    if kind == "contiguous":
        return f"contiguous:{number(rng)}" + (f":start={number(rng)}" if rng.random() < .5 else "")
    if kind == "hostlist":
        return rng.choice(["nid[0-3]", f"nid[0-{number(rng)}]", f"nid{number(rng)}",
                           "node[0-1]-0", "c0-0c0s0n[0-3]", "nid[", "nid[3-1]"])
    if files is not None and kind == "file":
        return files.node_file(rng)
    if files is not None and kind == "site":
        return files.site_csv(rng)
    return word(rng)


MAPPINGS = ["inorder", "random", "XYT", "TXY", "XYZT", "greedy", "rcb", "cubes", "graph",
            "rubik-tile", "rubik: app tile 1,2; net tile 2,1", "auto", "bogus", "inorder,random"]


def command(rng: random.Random, files) -> list[str]:
    """A whole command line of one of the commands that read machines, patterns and files."""
    cmd = rng.choice(["compare", "compare", "evaluate", "map", "nodes", "counters", "links",
                      "simgrid"])
    out = files.folder
    if cmd == "counters":
        argv = ["counters", files.counters(rng)]
        for opt, gen in (("--y", lambda r: number(r, ["0.5", "0.99", "1"])),
                         ("--bins", number), ("--sweep-y", lambda r: rng.choice(
                             ["0.6:1", "0.6:1:0.1", f"{number(r)}:{number(r)}:{number(r)}"])),
                         ("--times", lambda r: files.times(r)),
                         ("--percentiles", lambda r: rng.choice(["50,90", "x", "101"])),
                         ("--format", lambda r: r.choice(["table", "json", "csv"])),
                         ("--plot", lambda r: os.path.join(out, r.choice(["c.png", "c.gif"])))):
            if rng.random() < 0.3:
                argv += [opt, gen(rng)]
        return argv
    if cmd == "links":
        argv = ["links", files.counters(rng), "-m", machine(rng, files)]
        if rng.random() < 0.3:
            argv += ["--top", number(rng)]
        if rng.random() < 0.3:
            argv += ["--format", rng.choice(["json", "csv"])]
        return argv
    if cmd == "simgrid":
        return ["simgrid", "platform", "-m", machine(rng, files), "-o",
                os.path.join(out, rng.choice(["p.xml", "p.xml", ""]))]
    argv = [cmd, "-m", machine(rng, files)]
    if rng.random() < 0.4:
        argv += ["-n", nodes(rng, files)]
    if cmd == "nodes":
        return argv + (["--format", rng.choice(["json", "csv"])] if rng.random() < 0.5 else [])
    argv += ["-p", pattern(rng, files)]
    for opt, gen in (("--seed", number), ("--y", lambda r: r.choice(["0.5", "1", "nan", "0"])),
                     ("--threads", number), ("--routing", lambda r: r.choice(
                         ["dor", "adaptive", "dmodk", "minimal", "x"])),
                     ("--msg-overhead", duration), ("--nic-bw", bandwidth),
                     ("--mem-bw", lambda r: r.choice(["none", bandwidth(r)])),
                     ("--time-model", lambda r: r.choice(["on", "off"]))):
        if rng.random() < 0.15:
            argv += [opt, gen(rng)]
    if cmd == "compare":
        argv += ["--mappings", rng.choice(MAPPINGS[:-2] + ["inorder,random"])]
        argv += ["--format", rng.choice(["table", "json", "csv"])]
    elif cmd == "evaluate":
        if rng.random() < 0.3:
            argv += ["--mapfile", files.mapfile(rng)]
        else:
            argv += ["--mapping", rng.choice(MAPPINGS[:-2])]
        argv += ["--format", rng.choice(["table", "json", "csv"])]
    else:
        argv += ["--mapping", rng.choice(MAPPINGS[:-3]), "--emit",
                 rng.choice(["bgp", "slurm", "openmpi", "mpich", "hostfile", "cray", "bgq",
                             "pdf"]),
                 "-o", os.path.join(out, rng.choice(["m.txt", "m.txt", "new/", "/dev/null"]))]
        if rng.random() < 0.3:
            argv += ["--names", rng.choice(["nid{id:05d}", "n{pos}", "{id[0]}", "{pos:>9999}",
                                            "x", "{x}-{y}", "{id!r}", "{id:{pos}}"])]
        if rng.random() < 0.2:
            argv += ["--force"]
    return argv


def mutate(rng: random.Random, argv: list[str]) -> list[str]:
    """One change to a command line: a token's number replaced, a character dropped or
    doubled, a field repeated, or an option dropped."""
    argv = list(argv)
    i = rng.randrange(len(argv))
    t = argv[i]
    op = rng.randrange(6)
    if op == 0 and any(ch.isdigit() for ch in t):
        digits = [k for k, ch in enumerate(t) if ch.isdigit()]
        k = rng.choice(digits)
        argv[i] = t[:k] + rng.choice(HOSTILE_NUMBERS) + t[k + 1:]
    elif op == 1 and t:
        k = rng.randrange(len(t))
        argv[i] = t[:k] + t[k + 1:]
    elif op == 2 and t:
        k = rng.randrange(len(t))
        argv[i] = t[:k] + t[k] * rng.choice([2, 3]) + t[k:]
    elif op == 3 and ":" in t:
        parts = t.split(":")
        parts.insert(rng.randrange(1, len(parts) + 1), rng.choice(parts[1:] or ["x"]))
        argv[i] = ":".join(parts)
    elif op == 4 and i > 0:
        del argv[i]
    else:
        argv[i] = t + rng.choice(HOSTILE_WORDS)
    return argv


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """One change to a file: a byte replaced by a non-UTF-8 one, a number replaced, a line
    repeated or cut, or the file truncated."""
    op = rng.randrange(6)
    if not data:
        return b"\xff"
    k = rng.randrange(len(data))
    if op == 0:
        return data[:k] + bytes([rng.choice([0xff, 0xfe, 0x80, 0x00, 0xc3])]) + data[k + 1:]
    if op == 1:
        return data[:k] + rng.choice(HOSTILE_NUMBERS).encode("utf-8", "surrogateescape") + data[k:]
    if op == 2:
        lines = data.splitlines(keepends=True)
        j = rng.randrange(len(lines))
        return b"".join(lines[:j + 1] + [lines[j]] * rng.choice([1, 2]) + lines[j + 1:])
    if op == 3:
        return data[:k]
    if op == 4:
        return data + b"9" * rng.choice([10, 140_000])
    return data.replace(b",", b",,", 1)


class Files:
    """Writes input files of every kind (valid templates, often mutated) into ``folder``."""

    def __init__(self, folder: str, rng: random.Random):
        self.folder, self.rng, self.n = folder, rng, 0

    def _write(self, ext: str, text: str) -> str:
        self.n += 1
        path = os.path.join(self.folder, f"in{self.n}{ext}")
        data = text.encode()
        if self.rng.random() < 0.5:
            data = mutate_bytes(self.rng, data)
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    def graph(self, rng) -> str:
        ext = rng.choice([".csv", ".mtx", ".grf", ".graph"])
        text = {".csv": "src,dst,bytes\n0,1,1MiB\n1,2,64KiB\n2,3,1\n3,0,8\n",
                ".mtx": "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 2 5\n2 3 1e3\n4 1 7\n",
                ".grf": "0\n4 6\n0 000\n1 1\n2 0 2\n2 1 3\n1 2\n",
                ".graph": "4 3 001\n2 5\n1 5 3 2\n2 2 4 1\n3 1\n"}[ext]
        return self._write(ext, text)

    def pattern_toml(self, rng) -> str:
        sub = rng.choice(['pattern = "stencil:2x2"', 'flows = [[0, 1, "1MiB"], [1, 0, 64]]',
                          'flows = [[1.9, 0, "1MiB"]]', 'flows = [[true, 0, 1]]',
                          'pattern = "fft2d:2x2"\nname = "t"'])
        text = ("ranks = 4\n" if rng.random() < 0.5 else "") + f"[[phase]]\n{sub}\n"
        if rng.random() < 0.1:  # a file that includes itself
            path = os.path.join(self.folder, f"self{self.n}.toml")
            with open(path, "w") as fh:
                fh.write(f'[[phase]]\npattern = "{path}"\n')
            return path
        return self._write(".toml", text)

    def machine_toml(self, rng) -> str:
        if rng.random() < 0.1:
            path = os.path.join(self.folder, f"selfm{self.n}.toml")
            with open(path, "w") as fh:
                fh.write(f'machine = "{path}"\n')
            return path
        return self._write(".toml", f'machine = "torus:{shape(rng, 2)}"\n')

    def topology(self, rng) -> str:
        return self._write(".conf", rng.choice([
            "SwitchName=s0 Switches=s[1-2]\nSwitchName=s1 Nodes=n[0-1]\nSwitchName=s2 Nodes=n[2-3]\n",
            "SwitchName=s0 Switches=s0\n", "SwitchName=s0 Nodes=n[0-99999999999]\n"]))

    def node_file(self, rng) -> str:
        return self._write(".txt", rng.choice(["0\n1\n2-3\n", "nid00000\nnid00001\n",
                                               "99999999999999999999\n"]))

    def site_csv(self, rng) -> str:
        return self._write(".csv", rng.choice(["name,id\na,0\nb,1\n", "name,x,y\na,0,0\nb,1,0\n",
                                               "name,id\n,0\n"]))

    def counters(self, rng) -> str:
        return self._write(".csv", "src,dim,dir,dst,bytes\n0,0,1,1,5\n1,0,1,0,7\n"
                           "0,0,-1,1,3\n1,0,-1,0,2\n")

    def times(self, rng) -> str:
        return self._write(".csv", "label,phase,seconds\nin1,all,0.5\n")

    def mapfile(self, rng) -> str:
        return self._write(".map", "0 0 0\n1 0 0\n0 1 0\n1 1 0\n")


def generated(rng: random.Random, folder: str) -> list[str]:
    """A generated command line (files written into ``folder``)."""
    return command(rng, Files(folder, rng))


def mutated(rng: random.Random, folder: str) -> list[str]:
    """A valid command line with one mutation."""
    base = rng.choice(VALID)
    argv = [a.replace("{out}", folder) for a in base]
    return mutate(rng, argv)


#: valid command lines (small, fast) that mutations start from.
VALID = [
    ["compare", "-m", "torus:4x4:cores=2", "-p", "stencil:4x8:box", "--mappings",
     "inorder,XYT,random", "--format", "json"],
    ["compare", "-m", "fattree:k=2:levels=3", "-p", "pairs:random:seed=3", "--mappings",
     "inorder,random", "--format", "csv"],
    ["compare", "-m", "dragonfly:groups=3,rows=1,cols=2,nodes=2,cores=2", "-p", "fft2d:4x6",
     "--mappings", "inorder", "--format", "json"],
    ["evaluate", "-m", "torus:4x4", "-n", "0-7", "-p", "stencil:2x4:bytes=64KiB", "--mapping",
     "XYT", "--format", "json"],
    ["map", "-m", "mesh:4x4:cores=2", "-p", "stencil:4x8", "--mapping", "TXY", "--emit",
     "slurm", "-o", "{out}/m.txt", "--names", "nid{id:05d}"],
    ["map", "-m", "torus:4x4", "-n", "random:8:seed=2", "-p", "minighost:2x2x2", "--mapping",
     "inorder", "--emit", "openmpi", "-o", "{out}/r.txt"],
    ["nodes", "-m", "xc:groups=2:cores=4", "-n", "c0-0c0s[0-3]n[0-3]", "--format", "json"],
    ["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--msg-overhead", "2us", "--nic-bw",
     "2GB/s", "--mappings", "inorder", "--seed", "5", "--y", "0.9", "--format", "json"],
    ["simgrid", "platform", "-m", "torus:4x4:bw=1GB/s", "-o", "{out}/p.xml"],
]
