import { describe, it, expect } from 'vitest';
import { renderToString } from 'react-dom/server';
import TodoList from './TodoList.jsx';

describe('TodoList', () => {
  it('shows a message when empty', () => {
    expect(renderToString(<TodoList items={[]} onToggle={() => {}} />)).toContain('Nothing yet');
  });
});
