"""A torchrun-compatible launcher: ``python -m glasstorch.distributed.run --nproc_per_node N
[--nnodes M --node_rank R --master_addr A --master_port P] script.py args...``.

It starts ``nproc_per_node`` copies of the script on this machine with torchrun's environment
(``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``,
``MASTER_ADDR``, ``MASTER_PORT``, ``TORCHELASTIC_*``), each under its own ``mpiexec -n 1`` so
that it can join the others over MPI (see ``_mpi.py``): ``init_process_group()`` then meets
the other ranks, of this node and of the others, through the TCPStore that rank 0 serves on
``MASTER_ADDR:MASTER_PORT``. On a cluster, run the same command on every node with its
``--node_rank`` and rank 0's address as ``--master_addr``.

Faults: the launcher watches its ranks; when one exits with an error (or is killed) the others
are stopped at once (SIGTERM, then SIGKILL) and the launcher exits with an error naming the
failed rank, restarting the whole group first if ``--max_restarts`` allows. Ctrl-C (SIGINT or
SIGTERM to the launcher) stops every rank. No rank outlives the launcher.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid

__all__ = ["main", "get_args_parser", "parse_args", "run"]


def get_args_parser() -> argparse.ArgumentParser:
    """The launcher's command-line options (torchrun's names, with - or _)."""
    p = argparse.ArgumentParser(prog="python -m glasstorch.distributed.run",
                                description="Start a distributed training script on this "
                                            "machine's ranks (torchrun compatible).")

    def opt(name, **kw):
        p.add_argument(f"--{name}", f"--{name.replace('_', '-')}", dest=name, **kw)
    opt("nproc_per_node", default="1", help="ranks to start on this node (an int)")
    opt("nnodes", default="1", help="number of nodes (an int, or MIN:MAX taken as MAX)")
    opt("node_rank", type=int, default=0, help="this node's index among the nodes")
    opt("master_addr", default="127.0.0.1", help="address of the node running rank 0")
    opt("master_port", type=int, default=29500, help="port of rank 0's TCPStore")
    opt("max_restarts", type=int, default=0, help="restarts of the group after a failure")
    opt("monitor_interval", type=float, default=0.1, help="seconds between health checks")
    opt("rdzv_id", default=None, help="run id (TORCHELASTIC_RUN_ID)")
    opt("rdzv_backend", default="static", help="accepted for torchrun compatibility")
    opt("rdzv_endpoint", default="", help="HOST:PORT of the rendezvous (overrides master_*)")
    opt("standalone", action="store_true", help="single node on a free local port")
    opt("no_python", action="store_true", help="run the script as an executable")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    p.add_argument("training_script", help="the script (or module with -m) to run")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    """Parse the launcher's command line."""
    return get_args_parser().parse_args(args)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _mpiexec() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if found is None:
        from ._mpi import _INSTALL_HINT
        raise RuntimeError(f"more than one rank needs MPI's mpiexec, which was not found; "
                           f"{_INSTALL_HINT}")
    return found


def _command(args, world_size):
    if args.no_python:
        cmd = [args.training_script]
    elif args.module:
        cmd = [sys.executable, "-u", "-m", args.training_script]
    else:
        cmd = [sys.executable, "-u", args.training_script]
    cmd += args.training_script_args
    # one mpiexec per rank: each rank is its own MPI job and joins the others by port
    return cmd if world_size == 1 else [_mpiexec(), "-n", "1"] + cmd


class _Group:
    """The ranks of this node: start, watch, stop."""

    def __init__(self, args, nproc, nnodes, restart):
        self.args, self.nproc, self.nnodes, self.restart = args, nproc, nnodes, restart
        self.procs = []

    def start(self, run_id, addr, port):
        world = self.nproc * self.nnodes
        cmd = _command(self.args, world)
        for local in range(self.nproc):
            env = dict(os.environ)
            env.update(RANK=str(self.args.node_rank * self.nproc + local),
                       LOCAL_RANK=str(local), WORLD_SIZE=str(world),
                       LOCAL_WORLD_SIZE=str(self.nproc), GROUP_RANK=str(self.args.node_rank),
                       GROUP_WORLD_SIZE=str(self.nnodes),
                       ROLE_RANK=str(self.args.node_rank * self.nproc + local),
                       ROLE_WORLD_SIZE=str(world), ROLE_NAME="default",
                       MASTER_ADDR=addr, MASTER_PORT=str(port), TORCHELASTIC_RUN_ID=run_id,
                       TORCHELASTIC_RESTART_COUNT=str(self.restart),
                       TORCHELASTIC_MAX_RESTARTS=str(self.args.max_restarts),
                       TORCHELASTIC_USE_AGENT_STORE="False")
            env.setdefault("UCX_LOG_LEVEL", "error")   # MPICH's UCX warns on connect/accept
            if self.nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
                env["OMP_NUM_THREADS"] = "1"     # torchrun's default: ranks share the cores
            # each rank in its own session, so that stopping it reaches mpiexec's children
            self.procs.append(subprocess.Popen(cmd, env=env, start_new_session=True))

    def poll(self):
        """(finished, failure): failure is (local rank, exit code) of the first failed rank."""
        codes = [p.poll() for p in self.procs]
        for i, c in enumerate(codes):
            if c not in (None, 0):
                return True, (i, c)
        return all(c == 0 for c in codes), None

    def stop(self, grace=5.0):
        """Stop every rank still running: SIGTERM to its session, SIGKILL after ``grace``."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = [p for p in self.procs if p.poll() is None]
            for p in alive:
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(p.poll() is None for p in alive):
                time.sleep(0.05)
        for p in self.procs:            # also the session's leftovers (mpiexec's proxies)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()


def run(args) -> int:
    """Start the ranks described by ``args``, watch them, and return the exit code."""
    nproc = int(args.nproc_per_node)
    nnodes = int(str(args.nnodes).split(":")[-1])
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":")
        addr, port = host or addr, int(p) if p else port
    if args.standalone:
        nnodes, addr, port = 1, "127.0.0.1", _free_port()
    run_id = args.rdzv_id or ("none" if not args.standalone else str(uuid.uuid4()))
    if nproc < 1 or nnodes < 1 or not 0 <= args.node_rank < nnodes:
        raise ValueError(f"invalid layout: nproc_per_node={nproc}, nnodes={nnodes}, "
                         f"node_rank={args.node_rank}")
    stopping = []

    def on_signal(signum, frame):
        stopping.append(signum)
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for attempt in range(args.max_restarts + 1):
            group = _Group(args, nproc, nnodes, attempt)
            group.start(run_id, addr, port)
            try:
                while True:
                    if stopping:
                        group.stop()
                        print(f"[glasstorch.distributed.run] received signal {stopping[0]}: "
                              f"stopped all ranks", file=sys.stderr)
                        return 128 + stopping[0]
                    finished, failure = group.poll()
                    if finished:
                        break
                    time.sleep(args.monitor_interval)
            finally:
                group.stop()
            if failure is None:
                return 0
            local, code = failure
            rank = args.node_rank * nproc + local
            why = (f"killed by signal {-code}" if code < 0 else f"exit code {code}")
            print(f"[glasstorch.distributed.run] rank {rank} (local_rank {local}) failed "
                  f"({why}); stopped the other ranks"
                  + (f"; restarting ({attempt + 1}/{args.max_restarts})"
                     if attempt < args.max_restarts else ""), file=sys.stderr)
        return 1
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def main(args=None) -> None:
    """Entry point: parse the command line, run the ranks, exit with their status."""
    sys.exit(run(parse_args(args)))


if __name__ == "__main__":
    main()
