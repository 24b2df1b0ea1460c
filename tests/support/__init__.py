"""Helpers shared by the tests: a real server + Envoy stack and a small REST client."""
