// @vitest-environment node
import { describe, expect, it } from 'vitest'
import { actionText, conversationText, dialogTitle, filesText, nothingChanges, restoreTitle } from './restore'

describe('restore words', () => {
  it('names what a restore does to a path', () => {
    expect(['create', 'delete', 'modify', 'chmod', 'retype', undefined].map((a) => actionText(a as never))).toEqual([
      'brought back', 'removed', 'changed back', 'mode restored', 'type restored', 'restored',
    ])
  })

  it('titles a restore by what it did', () => {
    expect(restoreTitle({ op: 'undo', files: [] }, 'fix   the\nparser')).toBe('Undid the file changes of “fix the parser”')
    expect(restoreTitle({ op: 'redo', files: [] })).toBe('Redid the file changes of a turn')
    const f = [{ path: 'a' }]
    expect(restoreTitle({ op: 'rewind', through: 3, files: f, conversation: { through: 3, removed: 2 } })).toBe('Rewound the files and the conversation to here')
    expect(restoreTitle({ op: 'rewind', through: 3, files: [], conversation: { through: 3, removed: 2 } })).toBe('Rewound the conversation to here')
    expect(restoreTitle({ op: 'rewind', through: 3, files: f })).toBe('Rewound the files to here')
    expect(restoreTitle({ op: 'rewind', files: f })).toBe('Brought the files back to an earlier checkpoint')
    expect(restoreTitle({ op: 'undo', files: [] }, 'x'.repeat(100)).length).toBeLessThan(100)
  })

  it('lists files, a few of them', () => {
    expect(filesText([])).toBe('No file changed.')
    expect(filesText([{ path: 'a', action: 'create' }])).toBe('1 file: a (brought back).')
    const many = Array.from({ length: 7 }, (_, i) => ({ path: `f${i}` }))
    expect(filesText(many)).toBe('7 files: f0, f1, f2, f3, f4 and 2 more.')
  })

  it('says what the conversation loses', () => {
    expect(conversationText('undo')).toContain('only files change')
    expect(conversationText('rewind', { conversation: { through: 2, removed: 1 } })).toContain('loses the message after this point')
    expect(conversationText('rewind', { conversation: { through: 2, removed: 0 } })).toContain('already ends here')
    expect(conversationText('rewind', {})).toBe('The conversation stays as it is.')
    expect(conversationText('fork')).toContain('new one')
  })

  it('knows a preview that changes nothing', () => {
    expect(nothingChanges({ files: [] })).toBe(true)
    expect(nothingChanges({ files: [], conversation: { through: 1, removed: 0 } })).toBe(true)
    expect(nothingChanges({ files: [], conversation: { through: 1, removed: 2 } })).toBe(false)
    expect(nothingChanges({ files: [{ path: 'a', action: 'modify' }] })).toBe(false)
    expect(nothingChanges({ files: [], failed: [{ path: 'big', reason: 'too large' }] })).toBe(false)
  })

  it('titles the dialog', () => {
    expect(dialogTitle('rewind', 'before')).toBe('Rewind to before this message?')
    expect(dialogTitle('rewind', 'here')).toBe('Rewind to here?')
    expect(dialogTitle('fork')).toContain('Fork')
  })
})
