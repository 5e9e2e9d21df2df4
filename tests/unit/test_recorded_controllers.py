"""tkperf's parsers on tool output recorded from QEMU's emulated NVMe, AHCI
and SCSI controllers (tests/data/vm/README.rst says how and with which
tools); no device needed."""
from __future__ import annotations

import json

from conftest import data_path
from tkperf.target import health, writecache


def _read(name: str) -> str:
    with open(data_path(f"vm/{name}"), encoding="utf-8") as fh:
        return fh.read()


def test_the_volatile_write_cache_bit_of_a_recorded_controller():
    text = _read("nvme-id-ctrl.json")
    assert json.loads(text)["vwc"] == 7
    assert writecache.parse_vwc(text) is True
    # the same identify data with VWC bit 0 clear (a drive without a cache)
    without = json.dumps(dict(json.loads(text), vwc=6))
    assert writecache.parse_vwc(without) is False
    assert writecache.parse_vwc("not json") is None
    assert writecache.parse_vwc(json.dumps({"sn": "x"})) is None


def test_write_cache_states_recorded_from_each_controller():
    assert writecache.parse_nvme(_read("nvme-get-feature-6.txt")) == "WCE"
    assert writecache.parse_hdparm(_read("hdparm-W.txt")) == "WCE"
    assert writecache.parse_sdparm(_read("sdparm-get-WCE.txt")) == "WCE"


def test_health_from_a_recorded_nvme_smart_log():
    values = dict(health.from_nvme_smart_log(_read("nvme-smart-log.json")))
    assert values["temperature_c"] == 50.0  # 323 K
    assert values["media_errors"] == 0.0


def test_no_ata_security_on_the_emulated_sata_disk():
    text = _read("hdparm-I.txt")
    assert "Serial Number:      TKSATA01" in text
    assert "Security:" not in text  # hdparm's security section is absent: nothing to erase with
