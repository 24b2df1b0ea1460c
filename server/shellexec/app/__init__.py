"""Composition and process entry points: settings, the server graph, Envoy, the CLI."""
