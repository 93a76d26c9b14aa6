"""bobc under the user's locale (probe s34 locale).

Finding 1: gcc, as and ld print their messages in the user's language (gettext), and bobc reads
them to tell a resource failure (`ulimit -f`, a full disk: exit 8 with the hint that says what ran
out) from a compile error: under LC_ALL=de_DE.UTF-8 with the German catalogs installed, `ulimit
-f` gave "Die maximale Dateigröße ist überschritten signal terminated program cc1", read as "the
C compiler failed", exit 1.  Every gcc bobc runs now gets LC_MESSAGES=C (LC_ALL handed to every
other category), so its messages are the English bobc reads, and what it compiles is unchanged.

The fake gcc below speaks German unless glibc, through the system's own `locale` command,
resolves its LC_MESSAGES to C: gettext's rule (LANGUAGE is ignored when LC_MESSAGES is C)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.test_environ_s32 import _fake_gcc, _gcc_build   # one fake gcc for the environment tests

needs_locale = pytest.mark.skipif(shutil.which("locale") is None, reason="needs glibc's locale command")

# a gcc whose messages are translated as gettext translates them: in German unless LC_MESSAGES
# resolves to C (or POSIX), whatever LANGUAGE says
GERMAN_GCC = r"""messages=$(locale 2>/dev/null | sed -n 's/^LC_MESSAGES=//p' | tr -d '"')
case "$messages" in
  C|POSIX) echo "gcc: internal compiler error: File size limit exceeded signal terminated program cc1" >&2 ;;
  *) echo "gcc: internal compiler error: Die maximale Dateigröße ist überschritten signal terminated program cc1" >&2 ;;
esac
exit 4"""

USER_LOCALES = [{"LC_ALL": "de_DE.UTF-8"}, {"LANG": "de_DE.UTF-8"}, {"LC_MESSAGES": "de_DE.UTF-8"},
                {"LANG": "de_DE.UTF-8", "LANGUAGE": "de"}, {"LC_ALL": "de_DE.UTF-8", "LC_MESSAGES": "de_DE.UTF-8"}]


def _clear_locale(monkeypatch):
    for name in ("LC_ALL", "LANG", "LANGUAGE", "LC_MESSAGES", "LC_CTYPE", "LC_NUMERIC"):
        monkeypatch.delenv(name, raising=False)


def _resolved(environment: dict[str, str]) -> dict[str, str]:
    """What glibc makes of `environment`'s locale variables: the `locale` command's lines."""
    shown = subprocess.run(["locale"], env=environment, capture_output=True, text=True).stdout
    return {name: value.strip('"') for name, _, value in (line.partition("=") for line in shown.splitlines())}


@needs_locale
@pytest.mark.parametrize("user", USER_LOCALES)
def test_gccs_messages_are_read_in_english_whatever_the_users_locale(tmp_path, monkeypatch, user):
    from bobc.host import gcc

    _clear_locale(monkeypatch)
    for name, value in user.items():
        monkeypatch.setenv(name, value)
    _fake_gcc(tmp_path, monkeypatch, GERMAN_GCC)
    error = _gcc_build(tmp_path)
    assert isinstance(error, gcc.HostResourceError) and error.kind == "file size", error.render()
    assert error.exit_code == 8 and error.hint == "raise the file size limit (ulimit -f), then build again"


@needs_locale
@pytest.mark.parametrize("user", USER_LOCALES + [{"LC_ALL": "tr_TR.UTF-8", "LC_CTYPE": "C.UTF-8"}, {}])
def test_gcc_compiles_in_the_users_locale_but_for_its_messages(monkeypatch, user):
    """Every category but LC_MESSAGES (LC_CTYPE: gcc's input character set) resolves for gcc as
    it does for the user; LC_MESSAGES resolves to C."""
    from bobc.host import gcc

    _clear_locale(monkeypatch)
    for name, value in user.items():
        monkeypatch.setenv(name, value)
    users, gccs = _resolved(dict(os.environ)), _resolved(gcc.gcc_environment())
    assert gccs["LC_MESSAGES"] == "C"
    for category in gcc.LOCALE_CATEGORIES:
        assert gccs[category] == users[category], category


def test_the_categories_handed_out_are_glibcs_own():
    """LOCALE_CATEGORIES is every category `locale` lists but LC_MESSAGES."""
    from bobc.host import gcc

    if shutil.which("locale") is None:
        pytest.skip("needs glibc's locale command")
    listed = [line.partition("=")[0] for line in subprocess.run(["locale"], capture_output=True,
                                                                text=True).stdout.splitlines()]
    assert sorted(gcc.LOCALE_CATEGORIES) == sorted(name for name in listed
                                                   if name.startswith("LC_") and name not in ("LC_ALL", "LC_MESSAGES"))


# Finding 2 and 3: where the cache is when XDG_CACHE_HOME is relative or there is no home folder.

REPO = Path(__file__).resolve().parents[1]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
# bobc as a user with no password entry runs it (`docker run --user 4242`): pwd has no row for the uid
NO_PASSWD_ROW = ("import pwd, runpy, sys\n"
                 "def getpwuid(uid): raise KeyError(f'getpwuid(): uid not found: {uid}')\n"
                 "pwd.getpwuid = getpwuid\n"
                 "sys.argv[0] = 'bobc'\n"
                 "runpy.run_module('bobc', run_name='__main__')\n")


def _bobc(*args, cwd: Path, env: dict[str, str], no_passwd_row: bool = False):
    import sys

    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    environment = {**{k: v for k, v in os.environ.items() if k not in ("BOBC_CACHE_DIR", "XDG_CACHE_HOME", "HOME")},
                   "PYTHONPATH": path, **env}
    start = ["-c", NO_PASSWD_ROW] if no_passwd_row else ["-m", "bobc"]
    return subprocess.run([sys.executable, *start, *map(str, args)], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


def test_a_relative_xdg_cache_home_is_ignored(tmp_path):
    """The XDG Base Directory spec: a relative XDG_CACHE_HOME is invalid and ignored; bobc used it
    from the current folder, leaving a cache in whatever folder it ran from."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": "relcache", "TMPDIR": str(tmp_path)}
    checked = _bobc("check", LINREG, cwd=work, env=env)
    assert checked.returncode == 0, checked.stderr
    assert list(work.iterdir()) == []
    assert (home / ".cache/bobc").is_dir()
    shown = _bobc("cache", cwd=work, env=env)
    assert shown.stdout.startswith(f"{home}/.cache/bobc: "), shown.stdout


def test_an_absolute_xdg_cache_home_is_used(tmp_path, monkeypatch):
    from bobc import cache

    monkeypatch.delenv("BOBC_CACHE_DIR", raising=False)     # put back after: later tests keep theirs
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.folder() == tmp_path / "xdg/bobc"


def test_no_home_folder_is_no_cache_and_no_folder_named_tilde(tmp_path):
    """HOME unset and no password entry: os.path.expanduser("~") is "~", and bobc kept its cache
    in ./~/.cache/bobc of whatever folder it ran from; now the cache is off, and says why."""
    work = tmp_path / "work"
    work.mkdir()
    env = {"TMPDIR": str(tmp_path)}
    checked = _bobc("check", LINREG, cwd=work, env=env, no_passwd_row=True)
    assert checked.returncode == 0, checked.stderr
    assert list(work.iterdir()) == []
    shown = _bobc("cache", cwd=work, env=env, no_passwd_row=True)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == ("bobc cache: off (HOME is unset and this user has no home folder, so there is no cache "
                            "(set BOBC_CACHE_DIR for one))\n")
    # BOBC_CACHE_DIR still names one
    env["BOBC_CACHE_DIR"] = str(tmp_path / "named")
    assert _bobc("check", LINREG, cwd=work, env=env, no_passwd_row=True).returncode == 0
    assert (tmp_path / "named").is_dir() and list(work.iterdir()) == []


# Finding 6: under `python -OO` (PYTHONOPTIMIZE=2) a module's docstring is None, and the scripts
# that build their --help from it stopped with an AttributeError traceback before doing anything
# (build_fixture.py is README's quick start).

OO_SCRIPTS = [(["examples/bob/build_fixture.py"], None), (["examples/partitioned_regression/upgrade_checkpoint.py"], None),
              (["-m", "coppelius_host.build"], "examples/coppelius"),
              (["-m", "coppelius_host.sim_compare"], "examples/coppelius"), (["tools/tensor_map/capture.py"], None)]


@pytest.mark.parametrize("script, cwd", OO_SCRIPTS)
def test_the_scripts_help_works_under_python_OO(script, cwd):
    import sys

    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-OO", *(str(REPO / s) if s.endswith(".py") else s for s in script),
                           "--help"], cwd=REPO / cwd if cwd else REPO, env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith("usage: ")


def test_build_fixture_under_python_OO_writes_the_same_record(tmp_path):
    import sys

    made = []
    for flags in ([], ["-OO"]):
        out = tmp_path / f"record{len(made)}.bin"
        done = subprocess.run([sys.executable, *flags, str(REPO / "examples/bob/build_fixture.py"),
                               str(REPO / "examples/bob/corpus.txt"), "--prompts-file",
                               str(REPO / "examples/bob/prompts.txt"), "-o", str(out)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        made.append(out.read_bytes())
    assert made[0] == made[1]


# Finding 7: a cache entry holds strs Python decoded from file names' bytes by the filesystem
# encoding; bobc under another encoding (LC_ALL=C with PYTHONUTF8=0: ASCII) found the entry by the
# same key and used a path it cannot encode: UnicodeEncodeError traceback.

def test_a_cache_filled_under_utf_8_serves_a_bobc_whose_filesystem_encoding_is_ascii(tmp_path):
    import sys

    folder = tmp_path / "pl\u00e4ne"          # a folder named in UTF-8
    folder.mkdir()
    shutil.copytree(REPO / "examples/linear_regression/LinReg", folder / "LinReg")
    plan = os.fsencode(folder / "LinReg/Build/NativeHost.bob")
    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    base = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k not in ("LANG", "PYTHONUTF8")}
    base.update(PYTHONPATH=path, BOBC_CACHE_DIR=str(tmp_path / "cache"), TMPDIR=str(tmp_path))
    said = []
    for locale in ({"LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}):
        done = subprocess.run([os.fsencode(sys.executable), b"-m", b"bobc", b"check", plan], env={**base, **locale},
                              capture_output=True, timeout=300)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
        said.append(done.stdout)
    encoding = subprocess.run([sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"],
                              env={**base, "LC_ALL": "C", "PYTHONUTF8": "0"}, capture_output=True, text=True).stdout
    assert encoding.strip() == "ascii"       # the second bobc did decode file names otherwise
    assert said[0] == said[1]
