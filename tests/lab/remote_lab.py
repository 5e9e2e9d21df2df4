"""A remote-host lab on this machine, for the remote-target tests.

Two "hosts", 127.0.0.2 and 127.0.0.3 (all of 127.0.0.0/8 is loopback on
Linux), each reachable

* over SSH: one real OpenSSH server (``ssh_lab``, one per test session)
  listening on both addresses on one port, root login by a generated key
  only, host-key checking on in the client config it writes;
* over fio's client/server protocol: ``fio --server`` processes started per
  test (``fio_servers``), with this machine's fio or another one
  (``old_fio``: a real fio 3.25 from Debian, to test the version check).

Everything is a child of the test process, started by a fixture and stopped
by it, with a deadline on every wait.  The fixtures are registered for all
tests by ``tests/conftest.py``; test modules use them by name and import the
helpers from here::

    from remote_lab import LAB_HOSTS, refusing_config

Do not import the fixture functions themselves into a test module: pytest
would then make a second, module-owned ``ssh_lab`` (a second sshd).
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence

import pytest

LAB_HOSTS = ("127.0.0.2", "127.0.0.3")
SSHD = "/usr/sbin/sshd"
SSH_LOGIN_DEADLINE = 15.0
FIO_LISTEN_DEADLINE = 10.0

OLD_FIO_VERSION = "fio-3.25"
OLD_FIO_DEB = "fio_3.25-2_{arch}.deb"
OLD_FIO_URLS = ("http://deb.debian.org/debian/pool/main/f/fio/",
                # where bullseye goes once it leaves deb.debian.org
                "http://archive.debian.org/debian/pool/main/f/fio/")
# sha256 of fio_3.25-2_amd64.deb as Debian serves it; plain http is only
# safe because the file is checked against this.
OLD_FIO_SHA256 = {"amd64": "fc1d8147f8fd9da9f8880d8a2b4d80817d2a6874df7c812649962b1e8dbf4d20"}
OLD_FIO_CACHE = "/var/cache/tkperf-tests"


# ---------------------------------------------------------------- processes

def _children_by_parent() -> dict:
    """{ppid: [pid, ...]} for every process now visible in /proc."""
    tree: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: split after the last ')'
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(pid: int) -> List[int]:
    """Every live descendant of pid (sshd's per-connection children leave
    its process group with setsid(), so a group kill does not reach them)."""
    tree, found, todo = _children_by_parent(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def kill_tree(proc: subprocess.Popen, sig: int = signal.SIGKILL, grace: float = 5.0) -> None:
    """Signal proc's descendants and process group (it was started with
    start_new_session=True), then reap it; SIGKILL if it outlives grace."""
    if proc.poll() is None:
        for pid in descendants(proc.pid):
            _signal(pid, signal.SIGKILL)
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=grace)


def _tail(path: Path, limit: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:].strip() or "(nothing)"
    except OSError as e:
        return f"(cannot read {path}: {e})"


def free_port(addrs: Sequence[str] = LAB_HOSTS) -> int:
    """A TCP port free on every address in addrs (free now, not reserved)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind((addrs[0], 0))
            port = s.getsockname()[1]
        try:
            for addr in addrs:
                with socket.socket() as s:
                    s.bind((addr, port))
            return port
        except OSError as e:
            if e.errno != errno.EADDRINUSE:
                raise
    raise RuntimeError(f"no TCP port free on all of {', '.join(addrs)}")


def accepts(addr: str, port: int) -> bool:
    try:
        with socket.create_connection((addr, port), timeout=1.0):
            return True
    except OSError:
        return False


def wait_until(ready: Callable[[], bool], deadline: float, proc: subprocess.Popen) -> bool:
    """Poll ready() until it holds, proc exits or the deadline (seconds) passes."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if ready():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.1)
    return ready()


# ---------------------------------------------------------------- OpenSSH

def keygen(path: Path, comment: str) -> Path:
    """A new ed25519 key pair without a passphrase; returns the private key."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, capture_output=True, timeout=30)
    return path


def client_config(path: Path, port: int, key: Path, known_hosts: Path) -> Path:
    """An ssh client config for the lab's hosts, host-key checking on."""
    path.write_text(f"""Host {' '.join(LAB_HOSTS)}
    Port {port}
    User root
    IdentityFile {key}
    IdentitiesOnly yes
    UserKnownHostsFile {known_hosts}
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    UpdateHostKeys no
    CheckHostIP no
    BatchMode yes
    ConnectTimeout 5
    ControlMaster no
    ControlPath none
    LogLevel ERROR
""")
    return path


@dataclass
class SshLab:
    """A running sshd serving LAB_HOSTS on one port.

    ``ssh -F lab.config HOST CMD`` logs in as root on either host.  Sessions
    run with ``PATH`` starting at this Python's bin directory, so ``tkperf``
    there is the working tree's (installed editable)."""
    config: str
    port: int
    key: str
    known_hosts: str
    dir: Path
    proc: subprocess.Popen
    log: Path
    hosts: tuple = LAB_HOSTS

    def ssh_argv(self, host: str, *command: str, config: Optional[str] = None) -> List[str]:
        return ["ssh", "-F", config or self.config, "-o", "BatchMode=yes", host, "--", *command]

    def run(self, host: str, *command: str, config: Optional[str] = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
        """Run command on host over SSH; stdin is /dev/null."""
        return subprocess.run(self.ssh_argv(host, *command, config=config), capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=timeout)

    def stop(self) -> None:
        """Stop sshd and any session it still serves (idempotent)."""
        kill_tree(self.proc, signal.SIGTERM)

    def sshd_log(self) -> str:
        return _tail(self.log)


def _sshd_config(d: Path, port: int, host_key: Path, authorized: Path) -> Path:
    session_path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/sbin", "/usr/local/bin",
                                    "/usr/sbin", "/usr/bin", "/sbin", "/bin"])
    cfg = d / "sshd_config"
    cfg.write_text("".join(f"ListenAddress {h}:{port}\n" for h in LAB_HOSTS) + f"""AddressFamily inet
HostKey {host_key}
PidFile {d / 'sshd.pid'}
AuthorizedKeysFile {authorized}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitUserEnvironment no
PermitUserRC no
PrintMotd no
PrintLastLog no
X11Forwarding no
UseDNS no
MaxStartups 100:30:200
MaxSessions 50
LogLevel INFO
SetEnv PATH={session_path}
""")
    return cfg


def _start_sshd(d: Path, cfg: Path, log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=str(d))


def _await_logins(lab: SshLab) -> str:
    """"" once every lab host accepted a login, else what went wrong."""
    for host in lab.hosts:
        last = ["not tried"]

        def login(host: str = host, last: List[str] = last) -> bool:
            try:
                r = lab.run(host, "true", timeout=5)
            except subprocess.TimeoutExpired:
                last[0] = "ssh timed out"
                return False
            last[0] = f"ssh exit {r.returncode}: {r.stderr.strip()}"
            return r.returncode == 0

        if not wait_until(login, SSH_LOGIN_DEADLINE, lab.proc):
            return f"no SSH login to {host}:{lab.port} within {SSH_LOGIN_DEADLINE:.0f} s ({last[0]})"
    if "Bind to port" in lab.sshd_log():  # something else holds the port on one address
        return f"sshd could not bind port {lab.port} on every address"
    return ""


def start_ssh_lab(d: Path, attempts: int = 3) -> SshLab:
    """Keys, configs and a running sshd in directory d; every lab host has
    accepted a login when this returns.  RuntimeError (with sshd's log) if
    not; a port taken meanwhile by someone else is retried with another."""
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
    host_key = keygen(d / "ssh_host_ed25519_key", "tkperf-lab-host")
    key = keygen(d / "id_ed25519", "tkperf-lab-user")
    authorized = d / "authorized_keys"
    authorized.write_text((d / "id_ed25519.pub").read_text())
    host_pub = " ".join((d / "ssh_host_ed25519_key.pub").read_text().split()[:2])
    known_hosts = d / "known_hosts"
    problem = ""
    for attempt in range(attempts):
        port = free_port()
        known_hosts.write_text("".join(f"[{h}]:{port} {host_pub}\n" for h in LAB_HOSTS))
        config = client_config(d / "ssh_config", port, key, known_hosts)
        cfg = _sshd_config(d, port, host_key, authorized)
        lab = SshLab(str(config), port, str(key), str(known_hosts), d,
                     _start_sshd(d, cfg, d / f"sshd.{attempt}.log"), d / f"sshd.{attempt}.log")
        try:
            problem = _await_logins(lab)
        except BaseException:
            lab.stop()
            raise
        if not problem:
            return lab
        lab.stop()
        log = lab.sshd_log()
        problem = f"{problem}; {SSHD} -D -e -f {cfg} (exit {lab.proc.returncode}) said:\n{log}"
        if "Bind to port" not in log and "Cannot bind" not in log:
            break
    raise RuntimeError(problem)


def refusing_config(lab: SshLab, tmpdir) -> str:
    """A client config for the lab's hosts whose key sshd does not accept:
    a login with it fails with exit 255 and "Permission denied"."""
    d = Path(tmpdir)
    other = keygen(d / "id_ed25519_unauthorized", "tkperf-lab-stranger")
    return str(client_config(d / "ssh_config_refused", lab.port, other, Path(lab.known_hosts)))


@pytest.fixture(scope="session")
def ssh_lab(tmp_path_factory):
    """The session's SshLab (sshd on 127.0.0.2 and 127.0.0.3, one port)."""
    if not os.path.exists(SSHD):
        pytest.skip(f"needs {SSHD} (Debian package openssh-server)")
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("needs ssh and ssh-keygen (Debian package openssh-client)")
    try:
        lab = start_ssh_lab(tmp_path_factory.mktemp("ssh_lab"))
    except RuntimeError as e:
        pytest.fail(f"ssh_lab: {e}", pytrace=False)
    try:
        yield lab
    finally:
        lab.stop()


@pytest.fixture
def ssh_refusing_config(ssh_lab, tmp_path) -> str:
    """Path of a client config whose key the lab refuses."""
    return refusing_config(ssh_lab, tmp_path)


# ---------------------------------------------------------------- fio servers

@dataclass
class FioServer:
    """A ``fio --server`` child listening on addr,port."""
    addr: str
    port: int
    proc: subprocess.Popen
    fio: str
    log: Path

    @property
    def client_arg(self) -> str:
        """The value for ``fio --client=``."""
        return f"{self.addr},{self.port}"

    def kill(self) -> None:
        """SIGKILL the server and every child it forked (a host dying mid-round)."""
        kill_tree(self.proc, signal.SIGKILL)

    def output(self) -> str:
        return _tail(self.log)


@dataclass
class FioServerFactory:
    """Call it to start a server: ``fio_servers("127.0.0.3", fio=old_fio)``."""
    workdir: Path
    started: List[FioServer] = field(default_factory=list)

    def __call__(self, addr: str = LAB_HOSTS[0], fio: str = "fio", port: Optional[int] = None) -> FioServer:
        binary = shutil.which(fio)
        if binary is None:
            pytest.skip(f"needs {fio} (Debian package fio)")
        if port is None:
            port = free_port([addr])
        log = self.workdir / f"fio-server-{addr}-{port}.log"
        cwd = self.workdir / f"fio-server-{addr}-{port}"  # where a job's relative files would land
        cwd.mkdir(exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen([binary, f"--server=ip:{addr},{port}"], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=str(cwd))
        server = FioServer(addr, port, proc, binary, log)
        self.started.append(server)
        if not wait_until(lambda: accepts(addr, port), FIO_LISTEN_DEADLINE, proc):
            server.kill()
            pytest.fail(f"{binary} --server=ip:{addr},{port} did not listen within "
                        f"{FIO_LISTEN_DEADLINE:.0f} s (exit {proc.returncode}): {server.output()}",
                        pytrace=False)
        return server

    def stop_all(self) -> None:
        for server in self.started:
            server.kill()


@pytest.fixture
def fio_servers(tmp_path):
    """A factory of fio servers; all of them are killed after the test."""
    factory = FioServerFactory(tmp_path)
    try:
        yield factory
    finally:
        factory.stop_all()


# ---------------------------------------------------------------- another fio

def _download(url: str, dest: Path, timeout: float = 30) -> None:
    with urllib.request.urlopen(url, timeout=timeout) as r, open(dest, "wb") as f:
        shutil.copyfileobj(r, f)


def _fio_version(binary: str) -> str:
    r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    return (r.stdout.strip() or r.stderr.strip())


def fetch_old_fio(cache: str = OLD_FIO_CACHE) -> str:
    """Path of Debian's fio 3.25 binary, downloaded and unpacked into cache
    once (under a lock: several test sessions may share the cache).
    pytest.skip where it cannot be had."""
    try:
        arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except FileNotFoundError:
        pytest.skip("needs dpkg to fetch another fio version")
    if arch not in OLD_FIO_SHA256:
        pytest.skip(f"another fio version is only fetched for {', '.join(OLD_FIO_SHA256)}, not {arch}")
    deb = OLD_FIO_DEB.format(arch=arch)
    root = Path(cache) / deb[:-len(".deb")]
    binary = root / "usr" / "bin" / "fio"
    try:
        os.makedirs(cache, exist_ok=True)
    except OSError as e:
        pytest.skip(f"cannot cache another fio version in {cache}: {e}")
    with open(Path(cache) / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                got, why = Path(tmp) / deb, []
                for base in OLD_FIO_URLS:
                    try:
                        _download(base + deb, got)
                    except OSError as e:
                        why.append(f"{base + deb}: {e}")
                        continue
                    digest = hashlib.sha256(got.read_bytes()).hexdigest()
                    if digest == OLD_FIO_SHA256[arch]:
                        break
                    why.append(f"{base + deb}: sha256 {digest}, expected {OLD_FIO_SHA256[arch]}")
                else:
                    pytest.skip(f"cannot download {deb}: {'; '.join(why)}")
                tree = Path(tmp) / "tree"
                if root.exists():  # a half-made tree from an older layout: make it again
                    shutil.rmtree(root)
                subprocess.run(["dpkg-deb", "-x", str(got), str(tree)], check=True, capture_output=True,
                               timeout=120)
                os.replace(tree, root)
    version = _fio_version(str(binary))
    if version != OLD_FIO_VERSION:
        pytest.fail(f"{binary} --version said {version!r}, expected {OLD_FIO_VERSION}", pytrace=False)
    return str(binary)


@pytest.fixture(scope="session")
def old_fio() -> str:
    """Path of a real fio 3.25 (this machine's fio is another version)."""
    return fetch_old_fio()
