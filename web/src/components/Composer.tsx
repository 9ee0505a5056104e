import { useEffect, useRef, useState } from 'react'

/** Composer is the message box: Enter sends, Shift+Enter starts a new line. */
export function Composer({
  running,
  disabled,
  onSend,
  onStop,
  focusKey,
  draft,
  onDraftTaken,
}: {
  running: boolean
  disabled?: boolean
  onSend(text: string): void
  onStop(): void
  /** Changes when the box should take the focus (another session opened). */
  focusKey?: string
  /** A message given back (it could not be sent); n tells one from the next. */
  draft?: { text: string; n: number }
  /** Called once the draft is in the box (so that it is not put back again). */
  onDraftTaken?(): void
}) {
  const [text, setText] = useState('')
  const box = useRef<HTMLTextAreaElement>(null)
  useEffect(() => {
    // Not on a touch screen: the keyboard would pop up at every switch.
    if (window.matchMedia?.('(pointer: coarse)').matches) return
    box.current?.focus()
  }, [focusKey])
  useEffect(() => {
    if (!draft) return
    setText((t) => (t ? t : draft.text))
    onDraftTaken?.()
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [draft])
  // Grow with the text, up to a limit.
  useEffect(() => {
    const el = box.current
    if (!el) return
    el.style.height = 'auto'
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`
  }, [text])
  const send = () => {
    const t = text.trim()
    if (!t || running || disabled) return
    onSend(t)
    setText('')
  }
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault()
        send()
      }}
    >
      <textarea
        ref={box}
        aria-label="Message"
        placeholder={running ? 'The model is answering…' : 'Ask Hearth…'}
        title="Enter sends; Shift+Enter starts a new line"
        rows={1}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault()
            send()
          }
        }}
      />
      {running ? (
        <button type="button" className="stop" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="primary" disabled={disabled || !text.trim()}>
          Send
        </button>
      )}
    </form>
  )
}
