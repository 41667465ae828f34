"""Starting Debian's headless Chromium through Selenium for the browser tests and benchmark."""

from __future__ import annotations

import os
import shutil

import pytest


def chromium_driver(width: int = 1200, height: int = 800):
    """A Selenium Chrome driver on /usr/bin/chromium, or skip (fail when CI=true)."""
    binary = shutil.which("chromium")
    driver_bin = shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        binary = None
    if not binary or not driver_bin:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI must have chromium, chromium-driver and selenium (.ci/run installs them)"
            )
        pytest.skip("needs Debian's chromium and chromium-driver and the selenium package")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver_bin), options=opts)
