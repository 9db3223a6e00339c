"""Cell styles worked out once per workbook, then shared by every cell that wears the same.

Setting `cell.fill`, `cell.alignment` or `cell.font` makes openpyxl hash the whole style object
to find its id among the workbook's styles: a report row set about twenty of them, and that
hashing was the largest part of writing a report. A cell's style is only those ids (openpyxl's
`StyleArray`, which its own `copy` of a cell copies the same way), so the first cell of each
combination is styled as before and the later ones take a copy of its ids: the same ids in the
same order, the same file.
"""

from __future__ import annotations

from copy import copy
from typing import Any

from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.styles.cell_style import StyleArray


class CellStyles:
    """The style ids of each combination the cells of one workbook wear."""

    def __init__(self) -> None:
        # Keyed by the style objects' identities (hashing them is the cost avoided); the
        # objects are kept in the value so that no identity is reused while the cache lives.
        self._ids: dict[tuple[Any, ...], tuple[StyleArray, tuple[object, ...]]] = {}
        self._style_ids: dict[tuple[Any, ...], int] = {}

    def dress(
        self,
        cell: Any,
        *,
        number_format: str | None = None,
        font: Font | None = None,
        fill: PatternFill | None = None,
        alignment: Alignment | None = None,
    ) -> Any:
        """Give `cell` (an unstyled cell of this workbook) these styles; returns it."""
        if number_format is None and font is None and fill is None and alignment is None:
            return cell
        key = (number_format, id(font), id(fill), id(alignment))
        known = self._ids.get(key)
        if known is not None:
            cell._style = copy(known[0])
            return cell
        # In the order the writers set them before: each kind of style numbers its own.
        if number_format is not None:
            cell.number_format = number_format
        if font is not None:
            cell.font = font
        if fill is not None:
            cell.fill = fill
        if alignment is not None:
            cell.alignment = alignment
        self._ids[key] = (copy(cell._style), (font, fill, alignment))
        return cell

    def style_id(
        self,
        sheet: Any,
        *,
        number_format: str | None = None,
        font: Font | None = None,
        fill: PatternFill | None = None,
        alignment: Alignment | None = None,
    ) -> int:
        """The id openpyxl writes as the `s` of a cell of `sheet` (this workbook's) wearing
        these styles (0: none), registering the combination as writing such a cell would:
        for a sheet that writes its cells' XML itself (`reporting.xml_rows`)."""
        key = (number_format, id(font), id(fill), id(alignment))
        known = self._style_ids.get(key)
        if known is None:
            cell = self.dress(
                WriteOnlyCell(sheet),
                number_format=number_format,
                font=font,
                fill=fill,
                alignment=alignment,
            )
            # `dress` keeps the style objects alive, so no identity in the key is reused.
            known = self._style_ids[key] = cell.style_id if cell.has_style else 0
        return known
