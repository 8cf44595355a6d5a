"""The driver JVM's class archive (runtime/class_archive.py): where it lives, when it is used,
what is passed over. Writing and mapping a real archive is tested end to end in
tests/e2e/test_class_archive.py."""
from __future__ import annotations

import os
import subprocess

import pytest

from ddlog.runtime.class_archive import ClassArchive, class_archive


@pytest.fixture
def env(tmp_path):
    return {"DDLOG_CLASS_ARCHIVE_DIR": str(tmp_path / "cache"), "PATH": os.environ["PATH"]}


def test_off_and_the_users_own_options(env):
    assert class_archive({}, {**env, "DDLOG_CLASS_ARCHIVE": "off"}) is None
    own = {"spark.driver.extraJavaOptions": "-XX:SharedArchiveFile=/x.jsa"}
    assert class_archive(own, env) is None
    assert class_archive({}, {**env, "PATH": "/nonexistent"}) is None  # no java


def test_one_archive_per_class_path(env):
    a = class_archive({}, env)
    b = class_archive({"spark.driver.extraClassPath": "/opt/extra.jar"}, env)
    assert a is not None and b is not None
    assert a.directory == env["DDLOG_CLASS_ARCHIVE_DIR"] and os.path.isdir(a.directory)
    assert a.key != b.key
    assert a.key == class_archive({"spark.sql.shuffle.partitions": "3"}, env).key


def test_an_archive_is_used_only_at_the_size_it_was_written_with(tmp_path):
    archive = ClassArchive(str(tmp_path), "k1", "/usr/bin/java")
    assert archive.ready() is None
    (tmp_path / "driver-k1-5.jsa").write_bytes(b"1234")  # cut short
    (tmp_path / "driver-k2-4.jsa").write_bytes(b"1234")  # another class path's
    assert archive.ready() is None
    (tmp_path / "driver-k1-4.jsa").write_bytes(b"1234")
    assert archive.ready() == str(tmp_path / "driver-k1-4.jsa")
    assert "-XX:SharedArchiveFile=" + str(tmp_path / "driver-k1-4.jsa") in \
        archive.options(archive.ready())


def test_writing_one_removes_what_dead_writers_left(tmp_path):
    archive = ClassArchive(str(tmp_path), "k1", "/usr/bin/java")
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f"driver-k1.{dead.pid}.part").write_bytes(b"x")
    (tmp_path / f"driver-k1.{os.getppid()}.part").write_bytes(b"x")  # its writer runs
    options = archive.options(None)
    assert f"-XX:ArchiveClassesAtExit={tmp_path}/driver-k1.{os.getpid()}.part" in options
    assert "-Xlog:cds*=off" in options  # the JVM's messages would go to stdout
    assert sorted(os.listdir(tmp_path)) == [f"driver-k1.{os.getppid()}.part"]


def test_an_archive_cut_short_is_removed_before_a_driver_maps_it(tmp_path):
    """(A truncated archive crashes the JVM that maps it.) A real archive, of the classes
    `java -version` loads, is used; the same cut in half is removed."""
    java = class_archive({}, {"DDLOG_CLASS_ARCHIVE_DIR": str(tmp_path),
                              "PATH": os.environ["PATH"]}).java
    full = tmp_path / "full.jsa"
    subprocess.run([java, f"-XX:ArchiveClassesAtExit={full}", "-Xlog:cds*=off", "-version"],
                   capture_output=True, check=True, timeout=120)
    data = full.read_bytes()
    good = ClassArchive(str(tmp_path), "good", java)
    (tmp_path / f"driver-good-{len(data)}.jsa").write_bytes(data)
    assert good.usable() == str(tmp_path / f"driver-good-{len(data)}.jsa")
    cut = ClassArchive(str(tmp_path), "cut", java)
    (tmp_path / f"driver-cut-{len(data) // 2}.jsa").write_bytes(data[:len(data) // 2])
    assert cut.ready() is not None  # its size is the one in its name ...
    assert cut.usable() is None  # ... but a JVM does not map it
    assert not (tmp_path / f"driver-cut-{len(data) // 2}.jsa").exists()
