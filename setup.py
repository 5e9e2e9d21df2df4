from setuptools import find_packages, setup

import re

with open("tkperf/__init__.py") as fh:
    version = re.search(r'__version__ = "([^"]+)"', fh.read()).group(1)

with open("README.rst") as fh:
    long_description = fh.read()

setup(
    name="tkperf",
    version=version,
    description="SNIA PTS performance tests for SSDs and HDDs, driven by fio, with HTML/PDF reports",
    long_description=long_description,
    long_description_content_type="text/x-rst",
    license="GPL-3.0-or-later",
    python_requires=">=3.9",
    packages=find_packages(include=["tkperf", "tkperf.*"]),
    package_data={"tkperf.model": ["data/*"]},
    install_requires=["numpy", "matplotlib", "lxml", "docutils", "rst2pdf"],
    extras_require={"test": ["pytest"]},
    entry_points={
        "console_scripts": ["tkperf = tkperf.cli:main"],
        # Built-in test types are found like plug-ins: through this group.
        "tkperf.tests": [
            "iops = tkperf.testtypes.iops:IopsTest",
            "tp = tkperf.testtypes.throughput:ThroughputTest",
            "lat = tkperf.testtypes.latency:LatencyTest",
            "wsat = tkperf.testtypes.writesat:WriteSaturationTest",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Operating System :: POSIX :: Linux",
        "Topic :: System :: Benchmark",
        "Environment :: Console",
    ],
)
