"""What text from outside may do: only a cited source's own URL becomes a link (links), the one citation-marker
form the answer model may write and the neutralising of look-alikes in documents and questions (markers,
folding), and credentials kept out of what is shown or logged (redaction). It reads nothing of the other
components."""
