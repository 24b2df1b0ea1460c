"""Persisted message -> browser-facing message, and fold state -> the row's summary columns.

The browser view's output type is `normalize.OutputSummary`, which has no body fields, so a
list, boot-state or feed payload cannot carry stdout or stderr by accident. Projection reads
only summary columns and never writes; `state_columns` gives the values a writer stores in
them and `state_record` reads the fold state's record back from a row. `Masking` masks
credential forms in every text a projection serves (`secrets`), keeping the texts that were
costly to mask in `MaskedTexts`.
"""

from __future__ import annotations

from shellexec.projection.columns import state_columns, state_record
from shellexec.projection.masked_texts import MaskedTexts
from shellexec.projection.masking import NO_MASKING, Masking
from shellexec.projection.message import MessageView, ShellExecView, project_message
from shellexec.projection.turn import TurnView

__all__ = ["NO_MASKING", "MaskedTexts", "Masking", "MessageView", "ShellExecView", "TurnView",
           "project_message", "state_columns", "state_record"]
