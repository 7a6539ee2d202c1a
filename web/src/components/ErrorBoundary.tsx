import { Component, type ReactNode } from 'react';

/** A page that throws while rendering shows the error and a way back, never a blank screen. */
export class ErrorBoundary extends Component<
  { children: ReactNode; resetKey: string },
  { error: Error | null }
> {
  override state: { error: Error | null } = { error: null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override componentDidUpdate(prev: { resetKey: string }) {
    if (prev.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: null });
  }
  override render() {
    if (this.state.error) {
      return (
        <div role="alert" className="error">
          This page failed: {this.state.error.message}
        </div>
      );
    }
    return this.props.children;
  }
}
