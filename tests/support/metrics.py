"""Reads a stack's server metrics from its own loopback port (SHELLEXEC_METRICS_PORT)."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from support.stack import Stack

# (sample name, sorted labels) -> value, as one scrape gave them.
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def metrics_url(stack: Stack) -> str:
    return f"http://127.0.0.1:{stack.env['SHELLEXEC_METRICS_PORT']}/metrics"


def scrape(stack: Stack) -> Samples:
    with urllib.request.urlopen(metrics_url(stack), timeout=10) as response:
        assert response.headers["content-type"].startswith("text/plain")
        text = response.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
