"""Generated from proto/shellexec/v1 by `make generate`; do not edit."""
