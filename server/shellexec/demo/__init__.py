"""`python -m shellexec.demo` (`make demo`): plays a scripted multi-agent session through the
public REST API and prints the chat page's address.

- `service`: finds the front door, or starts `shellexec up` and stops it again;
- `rest`: the few REST calls the demo makes (standard library only);
- `steps` and `script`: what is played, as data; the provider-shaped payloads live in `script`;
- `player`: publishes the steps in order, pausing where the script says;
- `cli`: the command itself.
"""
